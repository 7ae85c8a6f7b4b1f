/**
 * onComplete delivery. The handler runs inside the transaction that records its delivery,
 * in a savepoint: if it throws, its writes roll back, the failure is counted and a retry
 * is scheduled with backoff; if it commits, the row says `done` in that same commit, so
 * it can never run twice.
 */
import type { OnCompleteWrite, TxOps, WorkRow } from "../driver/driver.js";
import { decodeJson } from "../json.js";
import { backoffMs } from "../retry.js";
import type { RunResult } from "../types.js";
import type { PoolRuntime } from "./runtime.js";
import { boundScheduledTime } from "./schedule.js";
import { errorText } from "../error-text.js";

/**
 * Runs the onComplete handler of a finished row in a savepoint and records the outcome.
 * `result` is the row's RunResult. Returns the bookkeeping written.
 */
export async function deliverOnComplete<Tx>(
  rt: PoolRuntime<Tx>,
  ops: TxOps<Tx>,
  row: WorkRow,
  result: RunResult,
  now: number,
): Promise<OnCompleteWrite> {
  const name = row.onComplete!;
  let write: OnCompleteWrite;
  try {
    await ops.savepoint(async () => {
      const handler = rt.handlers.get(name);
      if (!handler || handler.kind !== "onComplete") {
        throw new Error(`no onComplete handler named "${name}" is defined in this worker of pool "${rt.pool}"`);
      }
      await handler.fn({ workId: row.id, name, tx: ops.tx }, { workId: row.id, context: decodeJson(row.context), result });
    });
    write = { id: row.id, ocState: "done", ocAttempts: row.ocAttempts, ocRunAt: null, ocError: null };
  } catch (e) {
    const failures = row.ocAttempts + 1;
    const policy = rt.options.defaultRetryBehavior;
    const message = errorText(e);
    if (failures < policy.maxAttempts) {
      const runAt = boundScheduledTime(now + backoffMs(policy, failures, rt.options.random, (m) => rt.logger.error(m)), now, rt.logger);
      rt.logger.warn(`workpool: onComplete "${name}" for ${row.id} threw (try ${failures} of ${policy.maxAttempts}), retrying: ${message}`);
      write = { id: row.id, ocState: "pending", ocAttempts: failures, ocRunAt: runAt, ocError: message };
    } else {
      rt.logger.error(`workpool: onComplete "${name}" for ${row.id} failed ${failures} times; giving up: ${message}`);
      write = { id: row.id, ocState: "failed", ocAttempts: failures, ocRunAt: null, ocError: message };
    }
  }
  await ops.updateOnComplete([write]);
  return write;
}
