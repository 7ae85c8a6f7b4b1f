/**
 * `rate-limit`: at most `rateLimit.limit` attempts of the pool start in any window of
 * `rateLimit.periodMs`, and at most `keyRateLimit.limit` per key in any window of its
 * period. Starts are the claims the faulty driver reports once they committed (every
 * start goes through a claim, a rescued attempt's next start too), each at the simulated
 * time at which the claim ran in the store: when the attempts really started, whatever
 * time the store recorded for them (`claim-time` checks that it recorded this one).
 *
 * What is checked, per claim that took work and per limit (the pool's, and each key of
 * the claim for the key limit): the starts before it under the same stored limit, at a
 * time in (T - periodMs, T], plus the rows it took, number at most `limit`, where T is the
 * time the claim ran. Claims run in time order (one store call at a time, on a clock
 * that only moves forward, and the store reads the time once it holds the store), so
 * this is the sliding window, and every window of `periodMs` then holds at most `limit`
 * starts (the last claim of a window saw the others). Why it is sound:
 * - The store counts the starts it recorded after its time minus the period and records
 *   its own at its time; with that time the time it ran, its count is this one. It drops
 *   starts older than its time minus the longest period, none of which this one counts.
 * - A limit changed at run time (configure(), or a process applying its constructor
 *   options when it starts) begins a new segment: starts recorded under an earlier value
 *   are not counted (a longer period may find older starts already dropped, a higher limit
 *   allowed more). Only windows entirely under one stored value are checked.
 * - One store call runs per step and none of them both claims and changes a limit, so the
 *   limits read after a claim's step are the ones the claim read.
 * - The simulated processes share one clock: there is no skew between them.
 */
import type { RateLimit } from "../../src/types.js";
import type { ClaimSeen } from "./faulty-driver.js";
import { Violation } from "./violation.js";

/** The rate limits stored for a pool. */
export interface RateLimits {
  rateLimit: RateLimit | null;
  keyRateLimit: RateLimit | null;
}

/** The starts made under one stored value of a limit. */
interface Segment {
  limit: RateLimit;
  starts: { at: number; key: string | null }[];
}

const same = (a: RateLimit | null, b: RateLimit | null): boolean => a?.limit === b?.limit && a?.periodMs === b?.periodMs;

/** Checks the starts of one pool against its stored rate limits. */
export class RateLimitChecker {
  private pool: Segment | null = null;
  private key: Segment | null = null;

  constructor(
    private readonly label: (id: string) => string,
    /** The time a run starts at, for readable messages. */
    private readonly t0: number,
  ) {}

  /** Checks the claims of a step against the limits read after it. Throws a Violation. */
  check(claims: readonly ClaimSeen[], rates: RateLimits): void {
    this.pool = follow(this.pool, rates.rateLimit);
    this.key = follow(this.key, rates.keyRateLimit);
    for (const c of claims) {
      if (this.pool) this.checkPool(c, this.pool);
      if (this.key) this.checkKeys(c, this.key);
      for (const seg of [this.pool, this.key]) if (seg) c.keys.forEach((key) => seg.starts.push({ at: c.ranAt, key }));
    }
  }

  private checkPool(c: ClaimSeen, seg: Segment): void {
    // One that took nothing broke nothing (the starts before it were checked when they were made).
    if (!c.claimed.length) return;
    const since = c.ranAt - seg.limit.periodMs;
    const before = seg.starts.filter((s) => s.at > since);
    if (before.length + c.claimed.length > seg.limit.limit) {
      throw new Violation(
        "rate-limit",
        `${this.what(c)} took ${c.claimed.length} (${this.names(c)}) after ${before.length} start(s) in (t+${since - this.t0}, t+${c.ranAt - this.t0}]: ` +
          `rateLimit ${seg.limit.limit} per ${seg.limit.periodMs} ms`,
      );
    }
  }

  private checkKeys(c: ClaimSeen, seg: Segment): void {
    const since = c.ranAt - seg.limit.periodMs;
    for (const key of new Set(c.keys)) {
      if (key === null) continue;
      const taken = c.keys.filter((k) => k === key).length;
      const before = seg.starts.filter((s) => s.key === key && s.at > since).length;
      if (before + taken > seg.limit.limit) {
        throw new Violation(
          "rate-limit",
          `${this.what(c)} took ${taken} of key ${key} (${this.names(c)}) after ${before} start(s) of it in (t+${since - this.t0}, t+${c.ranAt - this.t0}]: ` +
            `keyRateLimit ${seg.limit.limit} per ${seg.limit.periodMs} ms`,
        );
      }
    }
  }

  private what(c: ClaimSeen): string {
    return `${c.proc} ${c.method} at t+${c.ranAt - this.t0}`;
  }

  private names(c: ClaimSeen): string {
    return c.claimed.map((id) => this.label(id)).join(" ");
  }
}

/** The segment of `limit`: the current one while the stored value is the same, else a new one (none without a limit). */
function follow(seg: Segment | null, limit: RateLimit | null): Segment | null {
  if (limit === null) return null;
  if (seg && same(seg.limit, limit)) return seg;
  return { limit, starts: [] };
}
