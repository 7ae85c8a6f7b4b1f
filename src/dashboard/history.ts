/**
 * The chart's points for time the dashboard did not sample, made from the store's rows
 * (Driver.readActivity): per step, the attempts started and work finished in it as rates
 * per second, and the mean wait to start of the work started in it. The age of the oldest
 * due work at a past moment is not in the rows, so those points leave it unknown (null).
 */
import type { ActivityRead } from "../driver/admin-ops.js";
import { meanWait } from "../admin/reads.js";

/** One filled point; its fields are those of a Series. */
export interface HistoryPoint {
  t: number;
  started: number;
  finished: number;
  waitMs: null;
  startWaitMs: number | null;
}

/**
 * The points of each pool in `pools` over `(from, to]`, one per step of `stepMs` (the last
 * may be shorter), each at the end of its step; a step with nothing read is a zero point.
 */
export function historyPoints(
  pools: readonly string[],
  reads: readonly ActivityRead[],
  from: number,
  to: number,
  stepMs: number,
): Map<string, HistoryPoint[]> {
  const byStep = new Map<string, ActivityRead>();
  for (const r of reads) byStep.set(`${r.pool}\n${r.bucket}`, r);
  const steps = Math.max(0, Math.ceil((to - from) / stepMs));
  const out = new Map<string, HistoryPoint[]>();
  for (const pool of pools) {
    const points: HistoryPoint[] = [];
    for (let i = 1; i <= steps; i++) {
      const t = Math.min(from + i * stepMs, to);
      const seconds = (t - (from + (i - 1) * stepMs)) / 1000;
      const r = byStep.get(`${pool}\n${i}`);
      points.push({
        t,
        started: r ? r.started / seconds : 0,
        finished: r ? r.finished / seconds : 0,
        waitMs: null,
        startWaitMs: r ? meanWait({ waitedCount: r.waitedCount, waitedSumMs: r.waitedSumMs }) : null,
      });
    }
    out.set(pool, points);
  }
  return out;
}
