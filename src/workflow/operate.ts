/**
 * The operator's actions on a run, shared by WorkflowManager and the admin API: restart it
 * from an entry, fork it into a new run, skip the entry a blocked run stopped at, and send
 * it an event. Each checks its input first, then in one transaction locks the run, refuses
 * what it cannot do (writing nothing), and moves the run to its next generation, so an
 * advance that read the run before does not commit. Who acts (a manager with its pool, or
 * the admin API with only a store) says how the run's work is written and canceled.
 */
import { checkInt, checkOptionKeys, optionKeys } from "../checks.js";
import type { Driver, TxOps } from "../driver/driver.js";
import type { Maybe, RunRow, StepRow, WorkflowOps } from "../driver/workflow-ops.js";
import { InvalidArgumentError } from "../errors.js";
import { newWorkId } from "../ids.js";
import { andThen } from "./engine.js";
import { UnknownWorkflowError } from "./errors.js";
import { endedByRun, journalBytesOf } from "./outcomes.js";
import type { BlockedInfo, ForkOptions, RestartOptions } from "./types.js";
import { checkWorkflowId } from "./validate.js";

/** The run an action writes work for: its id and pool. */
export type RunTarget = Pick<RunRow, "id" | "pool" | "trace">;

/** What an action needs from whoever takes it. */
export interface OperatorHost<Tx> {
  readonly driver: Driver<Tx>;
  /** The name of the run id's argument, for errors: "workflowId" (a manager) or "id" (the admin API). */
  readonly idField: string;
  /** The time the action writes. */
  now(): number;
  /** Refuses a run this host cannot act on (a manager: a run of another pool). */
  checkRun(run: RunRow): void;
  /** Writes an advance of `run` in `tx`. */
  enqueueAdvance(tx: Tx, run: RunTarget): Promise<unknown>;
  /** Writes `run`'s timeout, due at `deadline`, in `tx`. */
  enqueueTimeout(tx: Tx, run: RunTarget, deadline: number): Promise<unknown>;
  /** Cancels a step's work of `pool` inside `ops`' transaction. */
  cancelWork(ops: TxOps<Tx>, pool: string, workId: string): Promise<unknown>;
  /** Cancels a child run of `pool` (its cancel cascades) inside `ops`' transaction. */
  cancelChild(ops: TxOps<Tx>, pool: string, childId: string): Promise<unknown>;
  /** Forgets what this process keeps in memory of the run (its generation moved anyway). */
  forget(runId: string): void;
}

/** Highest entry number an option may name before the run is read (the largest maxSteps). */
const MAX_ENTRY = 10_000_000;
const FINISHED = new Set(["success", "failed", "canceled"]);
const RESTART_KEYS = optionKeys<RestartOptions>()({ from: true });
const FORK_KEYS = optionKeys<ForkOptions>()({ from: true, workflowId: true });

/**
 * Continues a failed, canceled or blocked run from entry `from`: entries before it are
 * kept, entries from it on are dropped (their open work canceled) and run again by the
 * function as the code is now. Its onComplete runs again when it ends.
 */
export async function restartRun<Tx>(host: OperatorHost<Tx>, id: string, options: unknown, what: string): Promise<void> {
  const o = checkOptionKeys("options", options, RESTART_KEYS, what);
  checkInt("options.from", o.from, 0, MAX_ENTRY);
  await host.driver.transaction(async (ops) => {
    const wf = host.driver.workflows(ops.tx);
    const run = await lockKnown(host, wf, id);
    checkRestartable(host, run);
    const from = checkInt("options.from", o.from, 0, run.steps);
    const journal = await wf.readSteps(id);
    checkKept(id, journal.slice(0, from), "restart");
    const now = host.now();
    const dropped = journal.slice(from);
    // Work still open in the dropped entries (a blocked run's) is canceled; its results would be ignored anyway.
    await stopOpen(host, ops, run.pool, dropped);
    await wf.deleteStepsFrom(id, from);
    const deadline = deadlineOf(run, now);
    await wf.updateRun(id, {
      state: "running",
      result: null,
      blocked: null,
      cancelReason: null,
      finishedAt: null,
      ocState: "none",
      ocAttempts: 0,
      ocError: null,
      deadline,
      addSteps: from - run.steps,
      addBytes: -journalBytesOf(dropped),
      now,
    });
    host.forget(id);
    await host.enqueueAdvance(ops.tx, run);
    if (deadline !== null) await host.enqueueTimeout(ops.tx, run, deadline);
  });
}

/**
 * Starts a new run of the same workflow and args whose journal is a copy of the source's
 * entries before `from` (each must have finished), so its function goes on from its call
 * `from`. The source, in any state, is not changed. Returns the new run's id.
 */
export async function forkRun<Tx>(host: OperatorHost<Tx>, id: string, options: unknown, what: string): Promise<string> {
  const o = checkOptionKeys("options", options, FORK_KEYS, what);
  checkInt("options.from", o.from, 0, MAX_ENTRY);
  const givenId = o.workflowId === undefined ? null : checkWorkflowId("options.workflowId", o.workflowId);
  return host.driver.transaction(async (ops) => {
    const wf = host.driver.workflows(ops.tx);
    const run = await lockKnown(host, wf, id);
    const from = checkInt("options.from", o.from, 0, run.steps);
    const kept = from === 0 ? [] : (await wf.readSteps(id)).filter((e) => e.n < from);
    const open = kept.find(isOpen);
    if (open) {
      throw new InvalidArgumentError(
        "options.from",
        `entry ${open.n} (${describeEntry(open)}) of run ${id} has not finished; fork from ${open.n} or earlier, or once it has finished`,
      );
    }
    checkKept(id, kept, "fork");
    const now = host.now();
    const forkId = givenId ?? newWorkId(now);
    const deadline = deadlineOf(run, now);
    const inserted = await wf.forkRun({
      id: forkId,
      sourceId: id,
      from,
      steps: kept.length,
      journalBytes: journalBytesOf(kept),
      deadline,
      now,
    });
    if (!inserted) throw new InvalidArgumentError("options.workflowId", `a run with id ${JSON.stringify(forkId)} exists; give a new id`);
    // A fork starts with no trace of its own.
    const fork = { id: forkId, pool: run.pool, trace: null };
    await host.enqueueAdvance(ops.tx, fork);
    if (deadline !== null) await host.enqueueTimeout(ops.tx, fork, deadline);
    return forkId;
  });
}

/**
 * Lets a blocked run go on without the journal entry it is blocked at: the entry is
 * dropped (its open work canceled, the event it took given back), every later entry moves
 * down by one, and the function replays against the journal without it. Refused for a run
 * that is not blocked, or while an entry after the dropped one has not finished.
 */
export async function skipStep<Tx>(host: OperatorHost<Tx>, id: string): Promise<void> {
  await host.driver.transaction(async (ops) => {
    const wf = host.driver.workflows(ops.tx);
    const run = await lockKnown(host, wf, id);
    if (run.state !== "blocked" || run.blocked === null) {
      throw new InvalidArgumentError(host.idField, `run ${id} ${shownState(run)}; only a blocked run can skip the step it is blocked at`);
    }
    const { n } = JSON.parse(run.blocked) as BlockedInfo;
    const entries = await wf.readSteps(id, n);
    const entry = entries[0];
    if (entry?.n !== n) {
      throw new InvalidArgumentError(
        host.idField,
        `run ${id} is blocked at entry ${n}, which its journal does not have (the code makes a call it never recorded); restart it from ${n} instead`,
      );
    }
    const later = entries.slice(1).find(isOpen);
    if (later) {
      throw new InvalidArgumentError(
        host.idField,
        `entry ${later.n} (${describeEntry(later)}) of run ${id}, after the one to skip, has not finished; skip once it has, or restart from ${n}`,
      );
    }
    const now = host.now();
    await stopOpen(host, ops, run.pool, [entry]);
    await wf.dropStep(id, n);
    await wf.updateRun(id, { state: "running", blocked: null, addSteps: -1, addBytes: -journalBytesOf([entry]), now });
    host.forget(id);
    await host.enqueueAdvance(ops.tx, run);
  });
}

/**
 * Writes event `name` with `body` (JSON text) for run `id` in `tx`: the lowest entry waiting
 * for it takes it and the run is advanced, or it waits for an awaitEvent. Refuses an unknown
 * or finished run. On SQLite it writes before it returns (the caller's synchronous transaction).
 */
export function writeEvent<Tx>(host: OperatorHost<Tx>, tx: Tx, id: string, name: string, body: string): Maybe<unknown> {
  const wf = host.driver.workflows(tx);
  const now = host.now();
  return andThen(wf.lockRun(id), (run) => {
    if (!run) throw new UnknownWorkflowError(id);
    host.checkRun(run);
    if (FINISHED.has(run.state)) {
      throw new InvalidArgumentError(host.idField, `run ${id} has finished (${run.state}); the event "${name}" was not delivered`);
    }
    return andThen(wf.insertEvent(id, name, body, now), () =>
      andThen(wf.waitingFor(id, name), (n) => {
        if (n === null) return undefined;
        return andThen(wf.takeEvent(id, name, n), (taken) =>
          andThen(wf.endStep(id, n, "done", JSON.stringify({ kind: "event", value: JSON.parse(taken!.payload) as unknown }), now), () =>
            host.enqueueAdvance(tx, run),
          ),
        );
      }),
    );
  });
}

/** The run, locked; refused when unknown or not the host's. */
async function lockKnown<Tx>(host: OperatorHost<Tx>, wf: WorkflowOps, id: string): Promise<RunRow> {
  const run = await wf.lockRun(id);
  if (!run) throw new UnknownWorkflowError(id);
  host.checkRun(run);
  return run;
}

function checkRestartable<Tx>(host: OperatorHost<Tx>, run: RunRow): void {
  if (run.parentId !== null)
    throw new InvalidArgumentError(host.idField, `run ${run.id} is a child run; restart its parent from the step that started it`);
  if (run.state === "running" || run.state === "canceling" || run.state === "success") {
    throw new InvalidArgumentError(
      host.idField,
      `run ${run.id} ${shownState(run)}; only failed, canceled or blocked runs can be restarted (fork it instead)`,
    );
  }
}

/**
 * Refuses to keep an entry the run's own cancel or timeout ended: the new run (or the run's
 * new life) would be given that cancel and act as canceled.
 */
function checkKept(id: string, kept: readonly StepRow[], verb: "restart" | "fork"): void {
  for (const e of kept) {
    const by = endedByRun(e);
    if (by === undefined) continue;
    throw new InvalidArgumentError(
      "options.from",
      `entry ${e.n} (${describeEntry(e)}) of run ${id} was ended by the run's ${by === "timeout" ? "timeout" : "cancel"}; ${verb} from ${e.n} or earlier`,
    );
  }
}

/** Cancels the work and child runs of the entries that are still open. */
async function stopOpen<Tx>(host: OperatorHost<Tx>, ops: TxOps<Tx>, pool: string, entries: readonly StepRow[]): Promise<void> {
  for (const e of entries) {
    if (!isOpen(e)) continue;
    if (e.workId !== null) await host.cancelWork(ops, pool, e.workId);
    if (e.childId !== null) await host.cancelChild(ops, pool, e.childId);
  }
}

/** A restarted or forked run's new deadline: the timeout recorded with the run, from now. */
function deadlineOf(run: RunRow, now: number): number | null {
  return run.timeoutMs === null ? null : now + run.timeoutMs;
}

function isOpen(e: StepRow): boolean {
  return e.state === "running" || e.state === "waiting";
}

/** An entry's kind and name, for messages. */
function describeEntry(e: StepRow): string {
  return e.kind === "value" ? e.name : `${e.kind} ${JSON.stringify(e.name)}`;
}

/** What the run's state is, in words: "is running", "succeeded". */
function shownState(run: RunRow): string {
  const words: Record<RunRow["state"], string> = {
    running: "is running",
    canceling: "is being canceled",
    blocked: "is blocked",
    success: "succeeded",
    failed: "failed",
    canceled: "was canceled",
  };
  return words[run.state];
}
