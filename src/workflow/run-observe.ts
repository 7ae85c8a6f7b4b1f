/**
 * What the engine reports to the pool's listeners and tracer: a run's root span at its
 * start, an advance's span (when the pool traces), the replay it made, and the steps whose
 * outcomes it gave the function, once they are committed. With neither listeners nor a
 * tracer it costs a few checks.
 */
import type { TxOps } from "../driver/driver.js";
import type { NewRun, RunRow, StepRow } from "../driver/workflow-ops.js";
import type { WorkflowAdvanceEnd, WorkflowAdvanceTraceInfo } from "../telemetry.js";
import { opsOn, type Engine } from "./engine.js";
import type { Execution } from "./execution.js";
import { deliveredRow, noteCallStart, type DeliveredStep } from "./observe.js";
import type { StartedAdvanceTrace } from "./telemetry.js";

/** What an advance's body tells its span. */
export interface AdvanceDone {
  exec: Execution;
  committed: boolean;
  replayedEntries: number;
}

/** Runs `body`, one advance of `run`, inside its span when the pool traces. */
export function inAdvanceSpan<Tx, R extends AdvanceDone>(
  engine: Engine<Tx>,
  run: RunRow,
  mode: WorkflowAdvanceTraceInfo["mode"],
  body: (span: StartedAdvanceTrace | null) => Promise<R>,
): Promise<R> {
  const span = engine.tracing.advance(run, mode);
  return span ? traced(span, body) : body(null);
}

async function traced<R extends AdvanceDone>(span: StartedAdvanceTrace, body: (span: StartedAdvanceTrace) => Promise<R>): Promise<R> {
  let done: R;
  try {
    done = await span.run(() => body(span));
  } catch (error) {
    span.end({ outcome: "error", error });
    throw error;
  }
  span.end({ outcome: advanceOutcome(done), replayedEntries: done.replayedEntries });
  return done;
}

function advanceOutcome(done: AdvanceDone): Exclude<WorkflowAdvanceEnd["outcome"], "error"> {
  if (!done.committed) return "fenced";
  if (done.exec.blocked) return "blocked";
  return done.exec.ending ? "finished" : "waiting";
}

/** Stores the advance's trace context with the run, in the advance's transaction, once it committed. */
export async function storeAdvanceTrace<Tx>(engine: Engine<Tx>, ops: TxOps<Tx>, run: RunRow, span: StartedAdvanceTrace): Promise<void> {
  if (span.stored) await opsOn(engine, ops.tx).setTrace(run.id, span.stored);
}

/** Whether anyone hears about steps: their start times are kept only then. */
export function observesSteps<Tx>(engine: Engine<Tx>): boolean {
  return engine.tracing.enabled || engine.events.wants("workflowStep");
}

/** After a replay: the start time of each journaled call, for a step that ends later in memory. */
export function noteReplayedCalls<Tx>(engine: Engine<Tx>, exec: Execution, journal: readonly StepRow[]): void {
  if (!observesSteps(engine)) return;
  for (const e of journal) {
    const call = exec.calls[e.n];
    if (call) noteCallStart(call, e.startedAt);
  }
}

/** A replay of `entries` journal entries that took `startedMs` (performance.now()) until now. */
export function reportReplay<Tx>(engine: Engine<Tx>, run: RunRow, entries: number, startedMs: number): void {
  // A run's first advance replays an empty journal: nothing was replayed.
  if (entries > 0) engine.events.replayed(run, entries, performance.now() - startedMs);
}

/** Reports the steps an advance gave the function, once it committed. */
export function reportDelivered<Tx>(engine: Engine<Tx>, run: RunRow, steps: readonly DeliveredStep[]): void {
  engine.events.delivered(run, steps);
  engine.tracing.steps(run, steps);
}

/** The entries of `fresh` whose outcomes were given (positions in `delivered`), as delivered steps. */
export function deliveredSteps<Tx>(engine: Engine<Tx>, fresh: readonly StepRow[], delivered: readonly number[]): DeliveredStep[] {
  if (!delivered.length || !observesSteps(engine)) return [];
  const given = new Set(delivered);
  return fresh.filter((e) => given.has(e.n)).map(deliveredRow);
}

/**
 * Writes a new run with `write` inside its root span when the pool traces (the span's
 * context goes into `run.trace`), and ends the span once the write settled.
 */
export function traceStart<Tx, T>(engine: Engine<Tx>, run: NewRun, write: () => T): T {
  const span = engine.tracing.start(run);
  if (!span) return write();
  run.trace = span.stored;
  let result: T;
  try {
    result = span.run(write);
  } catch (e) {
    span.end(e);
    throw e;
  }
  if (result instanceof Promise) {
    result.then(
      () => span.end(),
      (e: unknown) => span.end(e),
    );
  } else span.end();
  return result;
}
