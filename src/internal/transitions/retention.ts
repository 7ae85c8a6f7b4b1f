/**
 * The retention transition: finished work deleted once it finished more than
 * `retentionMs` ago and its onComplete is settled. Run by the maintenance leader.
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
