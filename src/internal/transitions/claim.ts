/**
 * The claim transition: due pending work moves to `running` for one worker. The store
 * enforces the pool's stored maxParallelism in the same transaction, under the pool's
 * lock, counting running work of every process (see Driver.claim).
 */
import type { ClaimOptions, ClaimResult } from "../../driver/driver.js";
import type { PoolRuntime } from "../runtime.js";

/** Claims up to `options.limit` due rows of the pool, in their own transaction. */
export function claimWork<Tx>(rt: PoolRuntime<Tx>, options: ClaimOptions): Promise<ClaimResult> {
  return rt.driver.claim(rt.pool, options);
}
