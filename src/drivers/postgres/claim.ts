/**
 * The claim: one call of the schema's claim() function (see the migration), in
 * autocommit or inside a completion transaction. Enforcing the pool's maxParallelism
 * happens in that function, under the pool row's lock.
 */
import type { ClaimOptions, ClaimResult, WorkRow } from "../../driver/driver.js";
import { run, type Queryable } from "./connection.js";
import { byRunAtThenId, toPoolConfig, toWorkRow, type PgWorkRow } from "./rows.js";
import type { Statements } from "./statements.js";

/** A row of claim(): summary columns, plus a claimed work row (all NULL when none was claimed). */
type ClaimRow = { max_parallelism: number; log_level: string; running_count: number; next_run_at: string | number | null } & (
  | PgWorkRow
  | { id: null }
);

/** Claims due work of `pool` on `db` (the pool, or a client inside BEGIN). */
export async function claimOn(db: Queryable, stmts: Statements, pool: string, opts: ClaimOptions): Promise<ClaimResult> {
  const { rows } = await run<ClaimRow>(db, stmts.claim, [pool, opts.workerId, opts.now, opts.leaseUntil, opts.limit]);
  const first = rows[0];
  if (!first) throw new Error(`workpool: pool "${pool}" has no stored configuration (was the pool started?)`);
  const claimed: WorkRow[] = [];
  for (const r of rows) if (r.id !== null) claimed.push(toWorkRow(r as PgWorkRow));
  claimed.sort(byRunAtThenId);
  return {
    claimed,
    config: toPoolConfig(first),
    running: first.running_count + claimed.length,
    nextRunAt: first.next_run_at === null ? null : Number(first.next_run_at),
  };
}
