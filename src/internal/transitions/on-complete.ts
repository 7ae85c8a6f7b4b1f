/**
 * onComplete delivery. The handler runs inside the transaction that records its delivery,
 * in a savepoint: if it throws, its writes roll back, the failure is counted and a retry
 * is scheduled with backoff; if it commits, the row says `done` in that same commit, so
 * it can never run twice.
 */
import type { OnCompleteWrite, TxOps, WorkRow } from "../../driver/driver.js";
import { decodeJson } from "../../json.js";
import { backoffMs } from "../../retry.js";
import type { RunResult, WorkId } from "../../types.js";
import type { PoolRuntime } from "../runtime.js";
import { boundScheduledTime } from "../run-at.js";
import { errorText } from "../../error-text.js";
import type { Refusals } from "./refusals.js";
import { onCompleteEnd } from "../tracing.js";

/**
 * Runs the onComplete handler of a finished row in a savepoint and records the outcome.
 * `result` is the row's RunResult. Returns the bookkeeping written.
 */
export function deliverOnComplete<Tx>(
  rt: PoolRuntime<Tx>,
  ops: TxOps<Tx>,
  row: WorkRow,
  result: RunResult,
  now: number,
): Promise<OnCompleteWrite> {
  if (!rt.tracing.enabled) return deliver(rt, ops, row, result, now);
  return rt.tracing.span("onComplete", rt.pool, row, () => deliver(rt, ops, row, result, now), onCompleteEnd);
}

async function deliver<Tx>(rt: PoolRuntime<Tx>, ops: TxOps<Tx>, row: WorkRow, result: RunResult, now: number): Promise<OnCompleteWrite> {
  const name = row.onComplete!;
  let write: OnCompleteWrite;
  try {
    await ops.savepoint(async () => {
      const handler = rt.handlers.get(name);
      if (!handler || handler.kind !== "onComplete") {
        throw new Error(`no onComplete handler named "${name}" is defined in this worker of pool "${rt.pool}"`);
      }
      const workId = row.id as WorkId;
      await handler.fn({ workId, name, tx: ops.tx }, { workId, context: decodeJson(row.context), result });
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

/** Most onComplete handlers redelivered in one transaction. */
const REDELIVERY_BATCH = 50;

/**
 * The onComplete retry transition: redelivers the pool's onComplete handlers that threw
 * earlier and are due at `now`, a batch per transaction (each in its own savepoint). A
 * batch the store refuses is taken apart so that one refused row holds back no other;
 * a row refused often enough has its onComplete marked failed, unrun. Returns how many
 * were delivered or settled.
 */
export async function redeliverDue<Tx>(rt: PoolRuntime<Tx>, refusals: Refusals, now: number): Promise<number> {
  try {
    return await rt.driver.transaction(async (ops) => {
      const rows = await ops.lockOnCompleteDue(rt.pool, now, REDELIVERY_BATCH);
      for (const row of rows) await redeliver(rt, refusals, ops, row, now);
      return rows.length;
    });
  } catch (e) {
    if (rt.driver.isTransientError(e)) throw e;
    rt.logger.warn(`workpool: the store refused a batch of onComplete redeliveries in pool "${rt.pool}"; redelivering them one by one`, e);
  }
  const due = await rt.driver.transaction((ops) => ops.lockOnCompleteDue(rt.pool, now, REDELIVERY_BATCH));
  let done = 0;
  for (const candidate of due) {
    done += await refusals.isolate(rt, candidate, 0, () =>
      rt.driver.transaction(async (ops) => {
        const [row] = await ops.lockWork(rt.pool, [candidate.id]);
        if (!row || row.ocState !== "pending" || (row.ocRunAt ?? 0) > now) return 0;
        await redeliver(rt, refusals, ops, row, now);
        return 1;
      }),
    );
  }
  return done;
}

/** Runs one onComplete again, or (once the store refused its record often enough) marks it failed unrun. */
async function redeliver<Tx>(rt: PoolRuntime<Tx>, refusals: Refusals, ops: TxOps<Tx>, row: WorkRow, now: number): Promise<void> {
  if (refusals.level(row.id) === 0) {
    await deliverOnComplete(rt, ops, row, JSON.parse(row.result!) as RunResult, now);
    return;
  }
  const reason = `workpool could not record onComplete's delivery: the store refused it (${errorText(refusals.lastError(row.id))})`;
  await ops.updateOnComplete([{ id: row.id, ocState: "failed", ocAttempts: row.ocAttempts, ocRunAt: null, ocError: reason }]);
}
