/**
 * The retention transition: finished work and finished workflow runs deleted once they
 * finished more than `retentionMs` ago and their onComplete is settled. Run by the
 * maintenance leader.
 */
import type { PoolRuntime } from "../runtime.js";

const RETENTION_BATCH = 500;
/** Retention deletes at most this many batches per tick, so it never hogs the store. */
const RETENTION_BATCHES_PER_TICK = 4;

/** Deletes finished work past retention, a bounded amount per call. Returns how many rows. */
export async function deleteExpired<Tx>(rt: PoolRuntime<Tx>, now: number): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < RETENTION_BATCHES_PER_TICK; i++) {
    const n = await rt.driver.deleteFinishedBefore(rt.pool, now - rt.options.retentionMs, RETENTION_BATCH);
    deleted += n;
    if (n < RETENTION_BATCH) break;
  }
  if (deleted) rt.logger.debug(`workpool: deleted ${deleted} finished work past retention in pool "${rt.pool}"`);
  return deleted;
}

/**
 * Deletes finished workflow runs past retention with their journals and events, a bounded
 * amount per call (pages of RETENTION_BATCH runs, each one statement or transaction). A run
 * stays while its onComplete is pending or its parent run has not finished. Returns how many runs.
 */
export async function deleteExpiredRuns<Tx>(rt: PoolRuntime<Tx>, now: number): Promise<number> {
  const ops = rt.driver.workflows();
  let deleted = 0;
  for (let i = 0; i < RETENTION_BATCHES_PER_TICK; i++) {
    const n = await ops.deleteFinishedRuns(rt.pool, now - rt.options.retentionMs, RETENTION_BATCH);
    deleted += n;
    if (n < RETENTION_BATCH) break;
  }
  if (deleted) rt.logger.debug(`workpool: deleted ${deleted} finished workflow run(s) past retention in pool "${rt.pool}"`);
  return deleted;
}
