/**
 * What the admin API shows of a pool's rows, derived once, for every store, from the raw
 * counts its driver reads (PoolRead: rows of each state, and the kinds within them).
 */
import type { PoolRead } from "../driver/admin-ops.js";
import type { PoolSummary } from "./types.js";

/** A pool's work by state, as PoolSummary.counts gives it: pending never attempted, finished by result. */
export function stateCounts(r: PoolRead): PoolSummary["counts"] {
  return {
    pending: r.pending - r.retrying,
    retrying: r.retrying,
    running: r.running,
    success: r.finished - r.failed - r.canceled,
    failed: r.failed,
    canceled: r.canceled,
  };
}

/** Work whose latest attempt started at or after the read's `since`: running or finished (waitedCount), or waiting to retry. */
export function startedSince(r: Pick<PoolRead, "waitedCount" | "retriedSince">): number {
  return r.waitedCount + r.retriedSince;
}
