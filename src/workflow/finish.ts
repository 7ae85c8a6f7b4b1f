/**
 * The end of a run and its cancel, each inside one transaction: the run's final state and
 * result, its open steps canceled (running actions get their signal aborted), its child
 * runs canceled, its onComplete run once, and its parent told.
 */
import type { TxOps } from "../driver/driver.js";
import type { RunRow, RunUpdate, StepRow } from "../driver/workflow-ops.js";
import { errorText } from "../error-text.js";
import { decodeJson } from "../json.js";
import { backoffMs } from "../retry.js";
import type { WorkId } from "../types.js";
import { enqueueAdvance, opsOn, type Engine } from "./engine.js";
import type { StepOutcome } from "./execution.js";
import { childOutcome, finalState } from "./outcomes.js";
import type { WorkflowResult } from "./types.js";

/** Tries of a run's onComplete before it is given up. */
const ON_COMPLETE_TRIES = 5;

/**
 * Ends `run` with `result` inside `ops`' transaction. With `generation` the write applies
 * only while the run is still at it (an advance's fence); returns false when it is not.
 */
export async function finishRun<Tx>(
  engine: Engine<Tx>,
  ops: TxOps<Tx>,
  run: RunRow,
  result: WorkflowResult<unknown>,
  now: number,
  generation: number | null,
  update: Partial<RunUpdate> = {},
): Promise<boolean> {
  const wf = opsOn(engine, ops.tx);
  const write: RunUpdate = {
    ...update,
    state: finalState(result),
    result: JSON.stringify(result),
    finishedAt: now,
    ocState: run.onComplete === null ? "none" : "pending",
    now,
  };
  if (generation === null) await wf.updateRun(run.id, write);
  else if (!(await wf.advanceRun(run.id, generation, write))) return false;
  engine.events.finished(ops, run, result, now, run.steps + (update.addSteps ?? 0), run.journalBytes + (update.addBytes ?? 0));
  engine.executions.drop(run.id);
  await stopOpenSteps(engine, ops, run.id, { kind: "canceled", by: "cancel", message: "the workflow ended before this step" }, now);
  if (run.onComplete !== null) await deliverRunOnComplete(engine, ops, run, result, now);
  if (run.parentId !== null && run.parentStep !== null) {
    const { state, outcome } = childOutcome(result);
    if (await wf.endStep(run.parentId, run.parentStep, state, JSON.stringify(outcome), now, run.id))
      await enqueueAdvance(engine, ops.tx, run.parentId);
  }
  return true;
}

/**
 * Cancels `run` (reason "cancel") or times it out ("timeout") inside `ops`' transaction:
 * a running run's open steps end canceled and their work is canceled, its child runs are
 * canceled, and an advance lets its function see a WorkflowCanceledError and unwind; a
 * blocked run ends at once. Returns false for a run already finished or being canceled.
 */
export async function cancelRun<Tx>(
  engine: Engine<Tx>,
  ops: TxOps<Tx>,
  runId: string,
  reason: "cancel" | "timeout",
  now: number,
): Promise<boolean> {
  const wf = opsOn(engine, ops.tx);
  const run = await wf.lockRun(runId);
  if (!run || (run.state !== "running" && run.state !== "blocked")) return false;
  const message = reason === "timeout" ? timeoutMessage(engine, run) : "the workflow was canceled";
  const result: WorkflowResult<unknown> = reason === "timeout" ? { kind: "failed", error: message } : { kind: "canceled" };
  // A blocked run's function cannot run: it ends now.
  if (run.state === "blocked")
    return finishRun(engine, ops, run, result, now, null, { cancelReason: reason === "timeout" ? "timeout" : "canceled" });
  await wf.updateRun(run.id, { state: "canceling", cancelReason: reason === "timeout" ? "timeout" : "canceled", now });
  engine.executions.drop(run.id);
  await stopOpenSteps(engine, ops, run.id, { kind: "canceled", by: reason, message }, now);
  await engine.tracing.within(run, () => enqueueAdvance(engine, ops.tx, run.id));
  return true;
}

/** Ends the run's open steps canceled: their work is canceled (running actions aborted), child runs canceled. */
async function stopOpenSteps<Tx>(engine: Engine<Tx>, ops: TxOps<Tx>, runId: string, outcome: StepOutcome, now: number): Promise<void> {
  const open: StepRow[] = await opsOn(engine, ops.tx).cancelOpenSteps(runId, JSON.stringify(outcome), now);
  for (const e of open) {
    if (e.workId !== null) await engine.pool.cancel(e.workId as WorkId);
    if (e.childId !== null) await cancelRun(engine, ops, e.childId, "cancel", now);
  }
}

/** What a timed-out run fails with. */
export function timeoutMessage<Tx>(engine: Engine<Tx>, run: RunRow): string {
  const def = engine.definitions.get(run.name);
  return def?.timeoutMs ? `the workflow timed out after ${def.timeoutMs} ms` : "the workflow timed out";
}

/**
 * Runs the run's onComplete mutation in a savepoint of the finishing transaction. If it
 * throws, its writes roll back and it is tried again later (a retry work), never twice.
 */
export async function deliverRunOnComplete<Tx>(
  engine: Engine<Tx>,
  ops: TxOps<Tx>,
  run: RunRow,
  result: WorkflowResult<unknown>,
  now: number,
): Promise<void> {
  const wf = opsOn(engine, ops.tx);
  const name = run.onComplete!;
  try {
    await ops.savepoint(async () => {
      const handler = engine.rt.handlers.get(name);
      if (!handler || handler.kind !== "mutation")
        throw new Error(`no mutation named "${name}" is defined in this process for pool "${engine.rt.pool}"`);
      const ctx = { workId: run.id as WorkId, attempt: run.ocAttempts + 1, name, scheduledAt: null, scheduleId: null, tx: ops.tx };
      await handler.fn(ctx, { workflowId: run.id, context: decodeJson(run.context), result });
    });
    await wf.updateRun(run.id, { ocState: "done", ocError: null, now });
  } catch (e) {
    const tries = run.ocAttempts + 1;
    const message = errorText(e);
    if (tries >= ON_COMPLETE_TRIES) {
      engine.rt.logger.error(`workpool: the onComplete "${name}" of workflow run ${run.id} failed ${tries} times; giving up: ${message}`);
      await wf.updateRun(run.id, { ocState: "failed", ocAttempts: tries, ocError: message, now });
      return;
    }
    engine.rt.logger.warn(
      `workpool: the onComplete "${name}" of workflow run ${run.id} threw (try ${tries} of ${ON_COMPLETE_TRIES}), retrying: ${message}`,
    );
    await wf.updateRun(run.id, { ocState: "pending", ocAttempts: tries, ocError: message, now });
    const policy = { maxAttempts: ON_COMPLETE_TRIES, initialBackoffMs: 1000, base: 2 };
    await engine.pool.enqueueMutation(
      engine.handles.deliverOnComplete,
      { r: run.id },
      { tx: ops.tx, runAfter: Math.round(backoffMs(policy, tries, engine.rt.options.random)) },
    );
  }
}
