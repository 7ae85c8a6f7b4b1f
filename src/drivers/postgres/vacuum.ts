/**
 * Vacuuming the work table from the maintenance leader. Every work row is updated twice
 * soon after it is inserted (claimed, then finished), and each update leaves a dead row
 * version and dead index entries behind. Until a vacuum removes them, claims walk over
 * the dead entries at the head of the pending index, so a long drain slows down as it
 * goes. The server's autovacuum looks at each database about once a minute (and may be
 * switched off), which a fast queue outpaces; so the leader checks the table's dead-row
 * count and, past a threshold, runs VACUUM itself.
 */
import type { Pool } from "pg";
import { InvalidArgumentError } from "../../errors.js";
import { checkInt, describeValue } from "../../checks.js";

/** When the leader vacuums the work table. */
export interface VacuumOptions {
  /** Dead row versions (as the server's statistics count them) that trigger a vacuum. Default 10,000. */
  minDeadRows?: number;
  /** Least time between two checks (and so between two vacuums) by one store, ms. Default 2,000. */
  minIntervalMs?: number;
}

/** Also required: dead row versions of at least this share of the live rows, so a huge table is not vacuumed over and over. */
const DEAD_SHARE = 0.1;

/** Validated settings; null when vacuuming is switched off. */
export interface VacuumSettings {
  minDeadRows: number;
  minIntervalMs: number;
}

/** Validates the store's `vacuum` option (`false` switches vacuuming off). */
export function vacuumSettings(value: unknown): VacuumSettings | null {
  if (value === false) return null;
  if (value !== undefined && (typeof value !== "object" || value === null)) {
    throw new InvalidArgumentError("vacuum", `must be false or an object { minDeadRows?, minIntervalMs? }, got ${describeValue(value)}`);
  }
  const v = (value ?? {}) as VacuumOptions;
  return {
    minDeadRows: v.minDeadRows === undefined ? 10_000 : checkInt("vacuum.minDeadRows", v.minDeadRows, 1, 1_000_000_000),
    minIntervalMs: v.minIntervalMs === undefined ? 2_000 : checkInt("vacuum.minIntervalMs", v.minIntervalMs, 0, 86_400_000),
  };
}

/** Checks the work table's dead-row count and vacuums it when due. */
export class Vacuumer {
  private lastCheckAt = -Infinity;
  /** Set when the store's role may not vacuum the table (it does not own it). */
  private notOwner = false;

  /**
   * @param table the work table, schema-qualified and quoted
   * @param settings when to vacuum
   */
  constructor(
    private readonly table: string,
    private readonly settings: VacuumSettings,
  ) {}

  /** Vacuums the table on `db` if it is due at `now`; returns whether it did. */
  async maybeVacuum(db: Pool, now: number): Promise<boolean> {
    if (this.notOwner || now - this.lastCheckAt < this.settings.minIntervalMs) return false;
    this.lastCheckAt = now;
    const { rows } = await db.query<{ dead: string; live: string; owner: boolean }>(
      `SELECT coalesce(s.n_dead_tup, 0) AS dead, coalesce(s.n_live_tup, 0) AS live, pg_has_role(c.relowner, 'MEMBER') AS owner
       FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
       WHERE c.oid = $1::regclass`,
      [this.table],
    );
    const row = rows[0];
    if (!row) return false;
    // Only the owner (or a superuser) may vacuum; anyone else would get a warning each time.
    if (!row.owner) {
      this.notOwner = true;
      return false;
    }
    const dead = Number(row.dead);
    if (dead < this.settings.minDeadRows || dead < DEAD_SHARE * Number(row.live)) return false;
    // SKIP_LOCKED: if another process (or autovacuum) is vacuuming it now, do nothing.
    await db.query(`VACUUM (SKIP_LOCKED) ${this.table}`);
    return true;
  }
}
