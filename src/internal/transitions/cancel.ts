/**
 * The cancel transitions, in one transaction: pending work (also work waiting out a retry
 * backoff) finishes `canceled` at once, with onComplete delivered; running work is only
 * marked (`cancel_requested`): its worker aborts the attempt, and whatever the attempt's
 * outcome, it finishes `canceled`.
 */
import type { CompletedEvent } from "../../events.js";
import type { PoolRuntime } from "../runtime.js";
import { cancelPending, type Transition } from "./outcome.js";
import { applyTransitions } from "./write.js";

/** What a cancel did: the events of the work it finished, and the running work it marked. */
export interface Canceled {
  events: CompletedEvent[];
  /** Ids of running work newly marked for cancel: abort their attempts in this process. */
  running: string[];
}

/** Cancels the given work of the pool. Finished work, and running work already marked, are left alone. */
export async function cancelWork<Tx>(rt: PoolRuntime<Tx>, ids: readonly string[]): Promise<Canceled> {
  let running: string[] = [];
  const events = await rt.driver.transaction(async (ops) => {
    const now = rt.options.clock.now();
    const rows = await ops.lockWork(rt.pool, ids);
    const transitions: Transition[] = [];
    running = [];
    for (const row of rows) {
      if (row.state === "pending") transitions.push(cancelPending(row));
      else if (row.state === "running" && !row.cancelRequested) running.push(row.id);
    }
    if (running.length) await ops.requestCancel(running);
    return applyTransitions(rt, ops, transitions, now);
  });
  return { events, running };
}
