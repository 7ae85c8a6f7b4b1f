/**
 * The advance of a run (the internal `advance` action): its function continues from where
 * it waits, given the outcomes journaled since, until it waits again, ends, or breaks the
 * journal; then one transaction writes what it did (commit.ts). The function continues in
 * memory when this process kept its execution at the run's generation; otherwise it is
 * replayed: every journal entry is matched to the call at its position, and outcomes are
 * given back in the rounds they were first given, so the function takes the same path.
 */
import type { TxOps } from "../driver/driver.js";
import type { RunRow, StepRow } from "../driver/workflow-ops.js";
import { errorText } from "../error-text.js";
import { InvalidArgumentError } from "../errors.js";
import { encodeJson } from "../json.js";
import {
  deliveredSteps,
  inAdvanceSpan,
  noteReplayedCalls,
  reportDelivered,
  reportReplay,
  storeAdvanceTrace,
  type AdvanceDone,
} from "./run-observe.js";
import { commitBlocked, commitEnd, commitSteps } from "./commit.js";
import { timeoutMessage } from "./finish.js";
import type { Definition, Engine } from "./engine.js";
import { entryInfo, Execution, type StepOutcome } from "./execution.js";
import { endedByRun, storedOutcome } from "./outcomes.js";
import { freshValue, Step } from "./step.js";
import type { StartedAdvanceTrace } from "./telemetry.js";
import type { WorkflowResult } from "./types.js";

/** What an advance did, for tests and the bench. */
export interface AdvanceReport {
  /**
   * "replayed" when the function ran again from the start, "resumed" when it continued in
   * memory, "idle" for nothing to do, "fenced" when another writer moved the run first
   * (nothing written), "parked" when the run is pinned to a version this process does not
   * define (its function did not run; a process with the version picks it up), "ended"
   * when such a run was being canceled and no live process defines its version: it ended
   * as its cancel asked, its function not run.
   */
  mode: "replayed" | "resumed" | "idle" | "fenced" | "parked" | "ended";
  /** The journal entries replayed. */
  replayedSteps: number;
}

/** Advances run `runId` once; one advance of a run at a time in this process. */
export function advance<Tx>(engine: Engine<Tx>, runId: string): Promise<AdvanceReport> {
  return engine.executions.serial(runId, async () => {
    // An advance refused by the generation fence read outcomes another writer did not give
    // (it committed first, from an older read): read again and go on, or the run would wait.
    for (let tries = 1; ; tries++) {
      const report = await advanceNow(engine, runId);
      if (report.mode !== "fenced") return report;
      if (tries >= FENCED_TRIES)
        throw new Error(
          `workpool: the advance of workflow run ${runId} lost to other writers ${tries} times in a row; it will be tried again`,
        );
    }
  });
}

/** How many times in a row an advance reads again after losing to another writer, before its work is retried with backoff. */
const FENCED_TRIES = 10;

async function advanceNow<Tx>(engine: Engine<Tx>, runId: string): Promise<AdvanceReport> {
  const wf = engine.driver.workflows();
  const run = await wf.readRun(runId);
  if (!run || (run.state !== "running" && run.state !== "canceling")) {
    engine.executions.drop(runId);
    return { mode: "idle", replayedSteps: 0 };
  }
  const def = engine.definitions.get(run.name);
  if (run.pinned && def?.version !== run.version) {
    engine.executions.drop(runId);
    // A cancel no live process can unwind in the run's own code ends the run now, as for a blocked run.
    if (run.state === "canceling" && !(await isVersionLive(engine, run))) {
      const now = engine.rt.options.clock.now();
      const result = runResult(engine, run, { ok: true, value: null });
      const ended = await engine.driver.transaction((ops) => commitEnd(engine, ops, run, result, { delivered: [], calls: [] }, now));
      return { mode: ended ? "ended" : "fenced", replayedSteps: 0 };
    }
    const parked = await wf.parkRun(run.id, run.generation, engine.rt.options.clock.now());
    if (parked)
      engine.rt.logger.debug(
        `workpool: workflow run ${run.id} is pinned to version ${run.version} of "${run.name}", which this process does not define; ` +
          "parked for a process that does",
      );
    return { mode: parked ? "parked" : "fenced", replayedSteps: 0 };
  }
  if (!def) {
    throw new Error(
      `workpool: workflow "${run.name}" is not defined in this process (pool "${engine.rt.pool}"); define it in every worker`,
    );
  }
  const kept = engine.executions.take(runId, run.generation);
  const done = await inAdvanceSpan(engine, run, kept ? "resumed" : "replayed", (span) => advanceFrom(engine, run, def, kept, span));
  return done.report;
}

/** The advance of `run` from its kept execution, or by replaying its journal without one. */
async function advanceFrom<Tx>(
  engine: Engine<Tx>,
  run: RunRow,
  def: Definition,
  kept: Execution | null,
  span: StartedAdvanceTrace | null,
): Promise<AdvanceDone & { report: AdvanceReport }> {
  const wf = engine.driver.workflows();
  const runId = run.id;
  let exec = kept;
  let mode: AdvanceReport["mode"] = "resumed";
  let replayedSteps = 0;
  let replayedEntries = 0;
  let journalLength: number;
  let fresh: readonly StepRow[];
  if (exec) {
    // Kept in memory: every entry up to its calls is known, only outcomes since are read.
    journalLength = exec.calls.length;
    fresh = await wf.readUndelivered(runId);
  } else {
    mode = "replayed";
    const replayStart = performance.now();
    const journal = await wf.readSteps(runId);
    journalLength = journal.length;
    exec = new Execution(journal, (name) => freshValue(hostValues(engine), name));
    const step = new Step(run.id, exec, {
      handlers: engine.rt.handlers,
      workflowName: (f, h) => workflowName(engine, f, h),
      ...hostValues(engine),
    });
    const args = JSON.parse(run.args) as unknown;
    exec.start(() => def.fn(step, args));
    await Execution.settle();
    replayedSteps = await replayRounds(exec, journal);
    if (exec.open && exec.calls.length < journal.length) {
      const missing = journal[exec.calls.length]!;
      exec.block({ n: missing.n, expected: null, recorded: entryInfo(missing) });
    }
    replayedEntries = journal.length;
    reportReplay(engine, run, replayedEntries, replayStart);
    noteReplayedCalls(engine, exec, journal);
    fresh = journal.filter((e) => e.delivered === null && e.kind !== "value" && e.outcome !== null);
  }
  // The outcomes journaled since the last advance: one new round.
  const delivered: number[] = [];
  if (exec.open && fresh.length) {
    await giveRound(exec, fresh);
    delivered.push(...fresh.map((e) => e.n));
  }
  // In a canceling run, a step the function calls before it has seen the cancel ends at once.
  if (run.state === "canceling") await cancelNewCalls(exec, journalLength, cancelOutcome(engine, run));
  const now = engine.rt.options.clock.now();
  const done = exec;
  const result = await engine.driver.transaction(async (ops) => {
    const deliveredBytes = delivered.length ? fresh.reduce((sum, e) => sum + (e.outcome?.length ?? 0), 0) : 0;
    const committed = await commitAdvance(engine, ops, run, done, journalLength, delivered, deliveredBytes, now);
    if (committed && span) await storeAdvanceTrace(engine, ops, run, span);
    const steps = committed ? deliveredSteps(engine, fresh, delivered) : [];
    if (steps.length) engine.events.later(ops, () => reportDelivered(engine, run, steps));
    return committed;
  });
  keepOrDrop(engine, run, exec, result);
  return { exec, committed: result, replayedEntries, report: { mode: result ? mode : "fenced", replayedSteps } };
}

/**
 * Writes what the function did since the run's last write (its calls from position
 * `journalLength` on, the outcomes it was given in `delivered`, of `deliveredBytes` in all),
 * in `ops`' transaction, fenced by the run's generation. False when another writer moved
 * the run first.
 */
export function commitAdvance<Tx>(
  engine: Engine<Tx>,
  ops: TxOps<Tx>,
  run: RunRow,
  exec: Execution,
  journalLength: number,
  delivered: number[],
  deliveredBytes: number,
  now: number,
): Promise<boolean> {
  // A canceling run whose code no longer matches its journal cannot unwind: it ends as its cancel asked.
  if (exec.blocked && run.state === "canceling")
    return commitEnd(engine, ops, run, runResult(engine, run, { ok: true, value: null }), { delivered: [], calls: [] }, now);
  if (exec.blocked) return commitBlocked(engine, ops, run, exec.blocked, now);
  const calls = exec.calls.slice(journalLength);
  // Steps the code ended: at the run's end every open step ends anyway.
  const ended = exec.takeEnded();
  if (exec.ending) return commitEnd(engine, ops, run, runResult(engine, run, exec.ending), { delivered, deliveredBytes, calls }, now);
  if (!calls.length && !delivered.length && !ended.size) return Promise.resolve(true);
  return commitSteps(engine, ops, run, { delivered, deliveredBytes, calls, ended }, now);
}

/** Whether a live process of the run's pool defines the run's workflow at the run's version. */
async function isVersionLive<Tx>(engine: Engine<Tx>, run: RunRow): Promise<boolean> {
  const live = await engine.driver.workflows().liveVersions(run.pool, engine.rt.options.clock.now());
  return live.some((g) => g.name === run.name && g.version === run.version && g.count > 0);
}

/** After a commit: the execution is kept at the run's next generation while it goes on here and does not wait long. */
export function keepOrDrop<Tx>(engine: Engine<Tx>, run: RunRow, exec: Execution, committed: boolean): void {
  if (committed && exec.open && !waitsLong(exec)) engine.executions.keep(run.id, exec, run.generation + 1);
  else engine.executions.drop(run.id);
}

/**
 * The order outcomes of one round are given in: the run's cancel first (it wins: a
 * `Promise.all` over a failed and a canceled step rejects with the cancel, so the function
 * cannot catch the failure and go on as if not canceled), then by position.
 */
export function inRoundOrder(entries: readonly StepRow[]): StepRow[] {
  const byCancel = (e: StepRow): number => (isRunCancel(e) ? 0 : 1);
  return [...entries].sort((a, b) => byCancel(a) - byCancel(b) || a.n - b.n);
}

/**
 * Gives one round's outcomes in round order, letting the function run on the run's cancel
 * before the others are given: whatever it chains on its awaits (a `.then`, a
 * `Promise.all`), it meets the cancel before a failure it could catch and go on from.
 */
async function giveRound(exec: Execution, entries: readonly StepRow[]): Promise<void> {
  const ordered = inRoundOrder(entries);
  for (let i = 0; i < ordered.length; i++) {
    const e = ordered[i]!;
    if (i > 0 && isRunCancel(ordered[i - 1]!) && !isRunCancel(e)) await Execution.settle();
    exec.deliver(e.n, storedOutcome(e) as StepOutcome);
  }
  if (ordered.length) await Execution.settle();
}

/** Whether an entry was ended by the run's cancel or timeout. */
function isRunCancel(e: StepRow): boolean {
  return endedByRun(e) !== undefined;
}

/** Ends, in this advance, the new calls of a canceling run's function until it has seen the cancel. */
async function cancelNewCalls(exec: Execution, journaled: number, outcome: StepOutcome): Promise<void> {
  while (exec.open && !exec.cancelSeen) {
    const fresh = exec.calls.filter((c) => c.n >= journaled && !c.settled);
    if (!fresh.length) return;
    for (const c of fresh) {
      c.endedAtCall = outcome;
      exec.deliver(c.n, outcome);
    }
    await Execution.settle();
  }
}

function cancelOutcome<Tx>(engine: Engine<Tx>, run: RunRow): StepOutcome {
  return run.cancelReason === "timeout"
    ? { kind: "canceled", by: "timeout", message: timeoutMessage(engine, run) }
    : { kind: "canceled", by: "cancel", message: "the workflow was canceled" };
}

/**
 * Gives the function the outcomes of past rounds, in order, letting it run after each. A
 * round may end steps the function calls within it (a cancel): those are given once made.
 * Steps the function's own code ended in a round are ended by the code again as it reacts
 * to the round's other outcomes; only those it does not end are given after them.
 */
async function replayRounds(exec: Execution, journal: readonly StepRow[]): Promise<number> {
  const rounds = new Map<number, StepRow[]>();
  for (const e of journal) {
    if (e.delivered === null || e.kind === "value") continue;
    const round = rounds.get(e.delivered);
    if (round) round.push(e);
    else rounds.set(e.delivered, [e]);
  }
  let replayed = 0;
  for (const g of [...rounds.keys()].sort((a, b) => a - b)) {
    let pending = rounds.get(g)!;
    while (pending.length && exec.open) {
      const called = pending.filter((e) => e.n < exec.calls.length);
      const others = called.filter((e) => !endedByCode(e));
      const made = inRoundOrder(others.length ? others : called);
      // Given an outcome in this round, but never called: the code no longer makes this call.
      if (!made.length) exec.deliver(pending[0]!.n, storedOutcome(pending[0]!) as StepOutcome);
      await giveRound(exec, made);
      replayed += made.length;
      pending = pending.filter((e) => !made.includes(e));
      if (!made.length) await Execution.settle();
    }
    if (!exec.open) break;
  }
  return replayed;
}

/** Whether the function's own code ended this entry (Execution.endCalls). */
function endedByCode(e: StepRow): boolean {
  const outcome = storedOutcome(e);
  return outcome?.kind === "canceled" && outcome.byCode === true;
}

/** How a run ends given how its function ended. */
function runResult<Tx>(engine: Engine<Tx>, run: RunRow, ending: NonNullable<Execution["ending"]>): WorkflowResult<unknown> {
  if (run.state === "canceling")
    return run.cancelReason === "timeout" ? { kind: "failed", error: timeoutMessage(engine, run) } : { kind: "canceled" };
  if (!ending.ok) return { kind: "failed", error: errorText(ending.error) };
  try {
    const text = encodeJson("returnValue", ending.value === undefined ? null : ending.value);
    return { kind: "success", returnValue: JSON.parse(text) };
  } catch (e) {
    return { kind: "failed", error: errorText(e) };
  }
}

/** Whether every open call waits on a sleep, an event or a child run (long waits: the run is not kept in memory). */
function waitsLong(exec: Execution): boolean {
  const open = exec.calls.filter((c) => !c.settled);
  return open.length > 0 && open.every((c) => c.request.kind === "sleep" || c.request.kind === "event" || c.request.kind === "workflow");
}

function hostValues<Tx>(engine: Engine<Tx>): { now(): number; random(): number } {
  const { clock } = engine.rt.options;
  return { now: () => clock.now(), random: engine.rt.options.random };
}

function workflowName<Tx>(engine: Engine<Tx>, field: string, handle: unknown): string {
  const h = handle as { kind?: unknown; name?: unknown; pool?: unknown } | null;
  if (
    typeof h === "object" &&
    h !== null &&
    h.kind === "workflow" &&
    typeof h.name === "string" &&
    engine.definitions.has(h.name) &&
    h.pool === engine.rt.pool
  ) {
    return h.name;
  }
  throw new InvalidArgumentError(field, "must be a workflow handle that this pool's WorkflowManager defined");
}
