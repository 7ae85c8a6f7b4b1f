/**
 * The limits on running attempts, checked after every step: `parallelism` (the pool's
 * maxParallelism) and `key-parallelism` (its keyParallelism, per key). Both count the
 * stored rows in state `running`, as the claim does: an attempt whose lease lapsed counts
 * until it is rescued.
 */
import type { PoolConfig, WorkRow } from "../../src/driver/driver.js";
import { Violation } from "./violation.js";

/** A stored limit, with the step it was read at. */
interface Limits {
  step: number;
  pool: number;
  /** Infinity when the pool has no per-key limit. */
  key: number;
}

/** Checks the running attempts of one pool against its stored limits. */
export class LimitChecker {
  private readonly limits: Limits[] = [];
  /** First step each running attempt was seen at. */
  private readonly runningSince = new Map<string, number>();

  constructor(private readonly label: (id: string) => string) {}

  /** Checks the rows read after `step` against the configuration read with them. Throws a Violation. */
  check(step: number, rows: readonly WorkRow[], config: PoolConfig | null): void {
    if (config) this.limits.push({ step, pool: config.maxParallelism, key: config.keyParallelism ?? Infinity });
    const running = rows.filter((r) => r.state === "running");
    const since = new Map<WorkRow, number>();
    for (const r of running) {
      const attempt = `${r.id}#${r.attempt}`;
      if (!this.runningSince.has(attempt)) this.runningSince.set(attempt, step);
      since.set(r, this.runningSince.get(attempt)!);
    }
    const allowed = this.allowed(Math.min(step, ...since.values()), "pool");
    if (running.length > allowed) throw new Violation("parallelism", `${running.length} attempts running, limit ${allowed}`);
    const byKey = new Map<string, WorkRow[]>();
    for (const r of running) if (r.key !== null) byKey.set(r.key, [...(byKey.get(r.key) ?? []), r]);
    for (const [key, list] of byKey) {
      // As for the pool: a lowered limit holds once the key's attempts started under the old one have ended.
      const keyAllowed = this.allowed(Math.min(...list.map((r) => since.get(r)!)), "key");
      if (list.length > keyAllowed) {
        const names = list.map((r) => `${this.label(r.id)}#${r.attempt}`).join(" ");
        throw new Violation("key-parallelism", `${list.length} attempts of key ${key} running (${names}), limit ${keyAllowed}`);
      }
    }
  }

  /**
   * The highest limit stored since the step before `oldest` (the check before the claim
   * of the oldest attempt counted: the claim read the limit that check saw).
   */
  private allowed(oldest: number, which: "pool" | "key"): number {
    return Math.max(0, ...this.limits.filter((l) => l.step >= oldest - 1).map((l) => l[which]));
  }
}
