/**
 * `rate-limit`: at most `rateLimit.limit` attempts of the pool start in any window of
 * `rateLimit.periodMs`, and at most `keyRateLimit.limit` per key in any window of its
 * period. Starts are the claims the faulty driver reports once they committed (every
 * start goes through a claim, a rescued attempt's next start too), each at the claim's
 * `now`, which the store records as the start's time.
 *
 * What is checked, per claim and per limit (the pool's, and each key of the claim for the
 * key limit): the starts recorded before it under the same stored limit, at a time in
 * (M - periodMs, M], plus the rows it took, number at most `limit`; M is the latest `now`
 * of any claim so far under that limit, this one included. For claims in time order M is
 * the claim's own `now`, and the check is the sliding window; that every window of
 * `periodMs` then holds at most `limit` starts follows (the last claim of a window saw
 * the others). Why it is sound:
 * - A claim counts the recorded starts later than its `now` - periodMs. A process reads
 *   `now` before its call waits in the queue, so claims may run out of time order; each
 *   claim also drops starts older than its `now` minus the longest period, so one with an
 *   earlier `now` than a claim before it may no longer see starts the latter dropped. Those
 *   are at most M - periodMs (each period in force is at least this one), so the window
 *   ends at M.
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

/** The starts recorded under one stored value of a limit. */
interface Segment {
  limit: RateLimit;
  starts: { at: number; key: string | null }[];
  /** The latest claim time seen under it. */
  latest: number;
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
      for (const seg of [this.pool, this.key]) {
        if (!seg) continue;
        seg.latest = Math.max(seg.latest, c.now);
        c.keys.forEach((key) => seg.starts.push({ at: c.now, key }));
      }
    }
  }

  private checkPool(c: ClaimSeen, seg: Segment): void {
    // One that took nothing broke nothing (the starts before it were checked when they were made).
    if (!c.claimed.length) return;
    const { since, end } = this.window(c, seg);
    const before = seg.starts.filter((s) => s.at > since);
    if (before.length + c.claimed.length > seg.limit.limit) {
      throw new Violation(
        "rate-limit",
        `${this.what(c)} took ${c.claimed.length} (${this.names(c)}) after ${before.length} start(s) in (t+${since - this.t0}, t+${end - this.t0}]: ` +
          `rateLimit ${seg.limit.limit} per ${seg.limit.periodMs} ms`,
      );
    }
  }

  private checkKeys(c: ClaimSeen, seg: Segment): void {
    const { since, end } = this.window(c, seg);
    for (const key of new Set(c.keys)) {
      if (key === null) continue;
      const taken = c.keys.filter((k) => k === key).length;
      const before = seg.starts.filter((s) => s.key === key && s.at > since).length;
      if (before + taken > seg.limit.limit) {
        throw new Violation(
          "rate-limit",
          `${this.what(c)} took ${taken} of key ${key} (${this.names(c)}) after ${before} start(s) of it in (t+${since - this.t0}, t+${end - this.t0}]: ` +
            `keyRateLimit ${seg.limit.limit} per ${seg.limit.periodMs} ms`,
        );
      }
    }
  }

  private window(c: ClaimSeen, seg: Segment): { since: number; end: number } {
    const end = Math.max(seg.latest, c.now);
    return { since: end - seg.limit.periodMs, end };
  }

  private what(c: ClaimSeen): string {
    return `${c.proc} ${c.method} at t+${c.now - this.t0}`;
  }

  private names(c: ClaimSeen): string {
    return c.claimed.map((id) => this.label(id)).join(" ");
  }
}

/** The segment of `limit`: the current one while the stored value is the same, else a new one (none without a limit). */
function follow(seg: Segment | null, limit: RateLimit | null): Segment | null {
  if (limit === null) return null;
  if (seg && same(seg.limit, limit)) return seg;
  return { limit, starts: [], latest: -Infinity };
}
