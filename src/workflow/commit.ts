/**
 * What an advance writes, in one transaction fenced by the run's generation: the outcomes
 * it gave the function (recorded as delivered in this generation) and a journal entry per
 * new step call, each with its work (an enqueue with the step's onComplete), its wait, or
 * its child run. If another writer moved the run meanwhile, nothing is written.
 */
import type { ActionHandle, MutationHandle } from "../handlers.js";
import { newWorkId } from "../ids.js";
import type { TxOps } from "../driver/driver.js";
import type { NewRun, RunRow, StepRow } from "../driver/workflow-ops.js";
import type { WorkId } from "../types.js";
import { enqueueAdvance, opsOn, type Engine } from "./engine.js";
import { requestEntry, type StepCall, type StepOutcome } from "./execution.js";
import { cancelRun, finishRun } from "./finish.js";
import { noteCallStart } from "./observe.js";
import { traceStart } from "./run-observe.js";
import { journalBytesOf } from "./outcomes.js";
import type { WorkflowResult } from "./types.js";

/** The rounds of one advance: outcomes given to the function, and the new calls it made. */
export interface AdvanceWrites {
  delivered: number[];
  /** The size of the outcomes given in `delivered` (the journal's size counts each once, when given). */
  deliveredBytes?: number;
  calls: StepCall[];
  /** Calls the function's own code ended (Execution.endCalls), new or journaled, by position. */
  ended?: ReadonlyMap<number, StepOutcome>;
}

/** A step the function ended had ended on its own meanwhile: the advance's writes roll back and it reads again. */
class StepEndedMeanwhile extends Error {}

/** Writes an advance's new steps; false when the run moved on meanwhile. */
export function commitSteps<Tx>(engine: Engine<Tx>, ops: TxOps<Tx>, run: RunRow, writes: AdvanceWrites, now: number): Promise<boolean> {
  const firstNew = writes.calls[0]?.n ?? Infinity;
  if (![...(writes.ended?.keys() ?? [])].some((n) => n < firstNew)) return writeSteps(engine, ops, run, writes, now);
  // Journaled steps to end: if one of them ended meanwhile, nothing of this advance is written.
  return ops
    .savepoint(() => writeSteps(engine, ops, run, writes, now))
    .catch((e: unknown) => {
      if (e instanceof StepEndedMeanwhile) return false;
      throw e;
    });
}

async function writeSteps<Tx>(engine: Engine<Tx>, ops: TxOps<Tx>, run: RunRow, writes: AdvanceWrites, now: number): Promise<boolean> {
  const wf = opsOn(engine, ops.tx);
  const generation = run.generation + 1;
  const ended = writes.ended ?? new Map<number, StepOutcome>();
  const entries: StepRow[] = writes.calls.map((c) => newEntry(run.id, c, generation, now, c.endedAtCall ?? ended.get(c.n)));
  const firstNew = writes.calls[0]?.n ?? Infinity;
  const endedHere = [...ended].filter(([n]) => n < firstNew);
  const bytes =
    journalBytesOf(entries) + (writes.deliveredBytes ?? 0) + endedHere.reduce((sum, [, o]) => sum + JSON.stringify(o).length, 0);
  if (run.steps + entries.length > engine.maxSteps || run.journalBytes + bytes > engine.maxJournalBytes) {
    const error =
      run.steps + entries.length > engine.maxSteps
        ? `the workflow's journal would pass its limit of ${engine.maxSteps} steps`
        : `the workflow's journal would pass its limit of ${engine.maxJournalBytes} bytes`;
    return finishRun(engine, ops, run, { kind: "failed", error }, now, run.generation);
  }
  if (!(await wf.advanceRun(run.id, run.generation, { addSteps: entries.length, addBytes: bytes, now }))) return false;
  if (engine.tracing.enabled || engine.events.wants("workflowStep")) for (const c of writes.calls) noteCallStart(c, now);
  await wf.markDelivered(run.id, writes.delivered, generation);
  await endJournaled(engine, ops, run.id, endedHere, generation, now);
  let again = false;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    const request = writes.calls[i]!.request;
    const context = { r: run.id, n: e.n };
    if (e.state === "canceled") continue;
    switch (request.kind) {
      case "action":
        e.workId = await engine.pool.enqueueAction(request.handle as ActionHandle<unknown, unknown>, JSON.parse(request.args), {
          ...request.options,
          tx: ops.tx,
          onComplete: engine.handles.stepDone,
          context,
        });
        break;
      case "mutation":
        e.workId = await engine.pool.enqueueMutation(request.handle as MutationHandle<unknown, unknown>, JSON.parse(request.args), {
          ...request.options,
          tx: ops.tx,
          onComplete: engine.handles.stepDone,
          context,
        });
        break;
      case "sleep":
        // Retried if its worker is lost: it does nothing, so running it again is harmless.
        e.workId = await engine.pool.enqueueAction(
          engine.handles.sleep,
          {},
          { tx: ops.tx, runAfter: request.ms, retry: true, onComplete: engine.handles.stepDone, context },
        );
        break;
      case "event": {
        const taken = await wf.takeEvent(run.id, request.name, e.n);
        if (taken) {
          end(e, "done", { kind: "event", value: JSON.parse(taken.payload) }, now);
          again = true;
        } else if (request.timeoutMs !== null) {
          // The timeout's work is the entry's: a restart's new entry n is not ended by it.
          e.workId = await engine.pool.enqueueMutation(engine.handles.eventTimeout, context, { tx: ops.tx, runAfter: request.timeoutMs });
        }
        break;
      }
      case "workflow": {
        const def = engine.definitions.get(request.workflow);
        // A new id each time: a restart's new entry n starts a new child run.
        e.childId = newWorkId(now);
        const deadline = def?.timeoutMs ? now + def.timeoutMs : null;
        const child: NewRun = {
          id: e.childId,
          pool: run.pool,
          name: request.workflow,
          args: request.args,
          version: def?.version ?? null,
          pinned: def?.pinned ?? false,
          onComplete: null,
          context: null,
          parentId: run.id,
          parentStep: e.n,
          deadline,
          timeoutMs: def?.timeoutMs ?? null,
          now,
        };
        await traceStart(engine, child, async () => {
          await wf.insertRun(child);
          await enqueueAdvance(engine, ops.tx, child.id);
        });
        engine.events.later(ops, () => engine.events.started(child, now));
        if (deadline !== null)
          await engine.pool.enqueueMutation(engine.handles.runTimeout, { r: e.childId }, { tx: ops.tx, runAt: deadline });
        break;
      }
      case "value":
      case "patch":
        break;
    }
  }
  await wf.insertSteps(entries);
  if (again) await enqueueAdvance(engine, ops.tx, run.id);
  return true;
}

/**
 * Writes the run's end (the function returned or threw); false when the run moved on
 * meanwhile. The now/random/uuid calls and patch markers of its last round are journaled
 * with it; other calls it made without awaiting them are not started.
 */
export async function commitEnd<Tx>(
  engine: Engine<Tx>,
  ops: TxOps<Tx>,
  run: RunRow,
  result: WorkflowResult<unknown>,
  writes: AdvanceWrites,
  now: number,
): Promise<boolean> {
  const generation = run.generation + 1;
  const values: StepRow[] = [];
  for (const c of writes.calls) {
    if (c.request.kind !== "value" && c.request.kind !== "patch") break;
    values.push(newEntry(run.id, c, generation, now));
  }
  const bytes = journalBytesOf(values) + (writes.deliveredBytes ?? 0);
  if (!(await finishRun(engine, ops, run, result, now, run.generation, { addSteps: values.length, addBytes: bytes }))) return false;
  const wf = opsOn(engine, ops.tx);
  await wf.markDelivered(run.id, writes.delivered, generation);
  await wf.insertSteps(values);
  return true;
}

/** Writes that the run is blocked by a determinism mismatch; false when the run moved on meanwhile. */
export async function commitBlocked<Tx>(engine: Engine<Tx>, ops: TxOps<Tx>, run: RunRow, blocked: unknown, now: number): Promise<boolean> {
  return opsOn(engine, ops.tx).advanceRun(run.id, run.generation, { state: "blocked", blocked: JSON.stringify(blocked), now });
}

/**
 * Ends journaled entries the function's own code ended, delivered in `generation`, and
 * cancels their work (a running action's signal is aborted) and child runs. Throws
 * StepEndedMeanwhile when one is no longer open.
 */
async function endJournaled<Tx>(
  engine: Engine<Tx>,
  ops: TxOps<Tx>,
  runId: string,
  ended: [number, StepOutcome][],
  generation: number,
  now: number,
): Promise<void> {
  if (!ended.length) return;
  const wf = opsOn(engine, ops.tx);
  const ns = new Set(ended.map(([n]) => n));
  const rows = (await wf.readSteps(runId, Math.min(...ns))).filter((e) => ns.has(e.n));
  for (const [n, outcome] of ended) {
    if (!(await wf.endStep(runId, n, "canceled", JSON.stringify(outcome), now))) throw new StepEndedMeanwhile();
  }
  await wf.markDelivered(runId, [...ns], generation);
  for (const e of rows) {
    if (e.workId !== null) await engine.pool.cancel(e.workId as WorkId);
    if (e.childId !== null) await cancelRun(engine, ops, e.childId, "cancel", now);
  }
}

/** The journal entry of a new call; `ended` is the outcome it was given when made, if any. */
function newEntry(runId: string, call: StepCall, generation: number, now: number, ended?: StepOutcome): StepRow {
  const r = call.request;
  const { kind, name } = requestEntry(r);
  const e: StepRow = {
    runId,
    n: call.n,
    kind,
    name,
    state: r.kind === "event" ? "waiting" : "running",
    args:
      r.kind === "action" || r.kind === "mutation" || r.kind === "workflow"
        ? r.args
        : r.kind === "sleep"
          ? JSON.stringify({ ms: r.ms })
          : null,
    outcome: null,
    workId: null,
    childId: null,
    delivered: null,
    startedAt: now,
    finishedAt: null,
  };
  if (r.kind === "value") {
    end(e, "done", { kind: "success", value: r.value }, now);
    // Its value went to the function when it was called.
    e.delivered = generation;
  } else if (r.kind === "patch") {
    // A marker has no outcome to give: it is never delivered, replay matches it by position.
    e.state = "done";
    e.finishedAt = now;
  } else if (ended) {
    end(e, "canceled", ended, now);
    e.delivered = generation;
  }
  return e;
}

function end(e: StepRow, state: StepRow["state"], outcome: StepOutcome, now: number): void {
  e.state = state;
  e.outcome = JSON.stringify(outcome);
  e.finishedAt = now;
}
