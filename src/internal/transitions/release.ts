/**
 * The hand-back transition: running attempts go back to `pending` unstarted, due now,
 * without counting the attempt (attempt - 1). Fenced by attempt, so an attempt that is no
 * longer current is left alone. Used by a stopping worker and for claims it will not run.
 * An attempt whose work was canceled meanwhile is not handed back: it finishes `canceled`.
 */
import type { AttemptRef } from "../../driver/driver.js";
import type { PoolRuntime } from "../runtime.js";
import { decide } from "./outcome.js";
import { applyTransitions } from "./write.js";

/** Puts the current attempts of `refs` back to pending, in one transaction. */
export async function releaseAttempts<Tx>(rt: PoolRuntime<Tx>, refs: readonly AttemptRef[]): Promise<void> {
  const fenced = refs.map((r) => ({ id: r.id, attempt: r.attempt }));
  const now = rt.options.clock.now();
  const events = await rt.driver.transaction(async (ops) => {
    const attempts = new Map(fenced.map((r) => [r.id, r.attempt]));
    const rows = await ops.lockWork(
      rt.pool,
      fenced.map((r) => r.id),
    );
    // Back in the queue, a canceled work would be claimed and run again.
    const canceled = rows.filter((r) => r.state === "running" && r.attempt === attempts.get(r.id) && r.cancelRequested);
    const ids = new Set(canceled.map((r) => r.id));
    const back = fenced.filter((r) => !ids.has(r.id));
    if (back.length) await ops.release(back, now);
    return applyTransitions(
      rt,
      ops,
      canceled.map((row) => decide(rt, row, { kind: "canceled" }, now)),
      now,
    );
  });
  for (const e of events) rt.events.emit(e);
}
