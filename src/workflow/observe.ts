/**
 * The workflow events a WorkflowManager emits on its pool (`workflowStarted`,
 * `workflowFinished`, `workflowStep`, `workflowReplayed`; docs/events.md), each once the
 * transaction that wrote what it reports has settled, and only when someone listens or
 * logs it. The admin's metrics count them (admin.observe(pool)).
 */
import type { Driver, TxOps } from "../driver/driver.js";
import type { RunRow, StepRow } from "../driver/workflow-ops.js";
import type { EventHub, WorkflowStepEvent, WorkpoolEventName } from "../events.js";
import { requestEntry, type StepCall, type StepOutcome } from "./execution.js";
import { storedOutcome } from "./outcomes.js";
import type { WorkflowResult } from "./types.js";

/** A step whose outcome was given to its function, as its journal entry records it. */
export interface DeliveredStep {
  n: number;
  kind: StepRow["kind"];
  name: string;
  outcome: StepOutcome;
  startedAt: number;
  finishedAt: number;
  workId: string | null;
  childId: string | null;
}

/** A transaction of the workflow layer: what runs once it has settled (`last` after the others: a run's end after its steps). */
interface OpenTransaction {
  depth: number;
  jobs: (() => void)[];
  last: (() => void)[];
}

/** Emits a pool's workflow events; holds back those written in a transaction until it settles. */
export class WorkflowEvents {
  /** Open transactions of the workflow layer, by their ops (a savepoint shares its transaction's). */
  private readonly open = new WeakMap<object, OpenTransaction>();

  constructor(
    private readonly hub: EventHub,
    private readonly pool: string,
  ) {}

  /** Whether event `name` has a listener or a log line: the callers skip building it when not. */
  wants(name: WorkpoolEventName): boolean {
    return this.hub.wants(name);
  }

  /** Whether any workflow event has a listener or a log line. */
  get wanted(): boolean {
    const hub = this.hub;
    return hub.wants("workflowStarted") || hub.wants("workflowFinished") || hub.wants("workflowStep") || hub.wants("workflowReplayed");
  }

  /**
   * `driver` with a transaction() that runs what {@link later} queued in it once it has
   * committed (or, nested in a transaction of the pool, once its savepoint is released),
   * and drops it if it fails; while `needed()` is false it is the driver's own.
   */
  holding<Tx>(driver: Driver<Tx>, needed: () => boolean): Driver<Tx> {
    // Nobody to report to (no listener, no log line, no tracer): no bookkeeping either.
    const transaction = <T>(fn: (ops: TxOps<Tx>) => Promise<T>): Promise<T> => (needed() ? this.hold(driver, fn) : driver.transaction(fn));
    const bound = new Map<PropertyKey, unknown>();
    return new Proxy(driver, {
      get(target, prop) {
        if (prop === "transaction") return transaction;
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        let fn = bound.get(prop);
        if (fn === undefined) bound.set(prop, (fn = (value as (...a: unknown[]) => unknown).bind(target)));
        return fn;
      },
    });
  }

  private async hold<Tx, T>(driver: Driver<Tx>, fn: (ops: TxOps<Tx>) => Promise<T>): Promise<T> {
    let entry: OpenTransaction | undefined;
    let marks = [0, 0];
    let value: T;
    try {
      value = await driver.transaction(async (ops) => {
        entry = this.open.get(ops);
        if (!entry) this.open.set(ops, (entry = { depth: 0, jobs: [], last: [] }));
        marks = [entry.jobs.length, entry.last.length];
        entry.depth++;
        try {
          return await fn(ops);
        } finally {
          entry.depth--;
        }
      });
    } catch (e) {
      // Its writes rolled back (the transaction, or the savepoint), or its commit failed: so do its events.
      if (entry) {
        entry.jobs.length = Math.min(entry.jobs.length, marks[0]!);
        entry.last.length = Math.min(entry.last.length, marks[1]!);
      }
      throw e;
    }
    if (entry && entry.depth === 0) this.flush(entry);
    return value;
  }

  /** Runs `job` once the workflow-layer transaction of `ops` has settled (with `last`, after the others); at once outside one. */
  later(ops: object, job: () => void, last = false): void {
    const entry = this.open.get(ops);
    if (entry && entry.depth > 0) (last ? entry.last : entry.jobs).push(job);
    else job();
  }

  private flush(entry: OpenTransaction): void {
    const jobs = [...entry.jobs.splice(0), ...entry.last.splice(0)];
    for (const job of jobs) job();
  }

  /** A run was written (call after its write). */
  started(run: { id: string; name: string; parentId: string | null }, now: number): void {
    if (!this.hub.wants("workflowStarted")) return;
    this.hub.emit({
      event: "workflowStarted",
      pool: this.pool,
      workflowId: run.id,
      workflow: run.name,
      ...(run.parentId === null ? {} : { parentId: run.parentId }),
      startedAt: now,
    });
  }

  /** `run` ended with `result` at `now`, its journal `steps` entries and `bytes` long: emitted once `ops`' transaction settles. */
  finished(ops: object, run: RunRow, result: WorkflowResult<unknown>, now: number, steps: number, bytes: number): void {
    if (!this.hub.wants("workflowFinished")) return;
    this.later(
      ops,
      () =>
        this.hub.emit({
          event: "workflowFinished",
          pool: this.pool,
          workflowId: run.id,
          workflow: run.name,
          outcome: result.kind,
          ...(result.kind === "failed" ? { error: result.error } : {}),
          finishedAt: now,
          durationMs: Math.max(0, now - run.createdAt),
          journalEntries: steps,
          journalBytes: bytes,
        }),
      true,
    );
  }

  /** Steps of `run` whose outcomes an advance gave its function and committed. */
  delivered(run: RunRow, steps: readonly DeliveredStep[]): void {
    if (!steps.length || !this.hub.wants("workflowStep")) return;
    for (const s of steps) {
      if (s.kind === "value" || s.kind === "patch") continue;
      this.hub.emit({
        event: "workflowStep",
        pool: this.pool,
        workflowId: run.id,
        workflow: run.name,
        n: s.n,
        kind: s.kind,
        name: s.name,
        outcome: s.outcome.kind,
        durationMs: Math.max(0, s.finishedAt - s.startedAt),
      } satisfies WorkflowStepEvent);
    }
  }

  /** An advance replayed `entries` journal entries of `run` in `durationMs`. */
  replayed(run: RunRow, entries: number, durationMs: number): void {
    if (!this.hub.wants("workflowReplayed")) return;
    this.hub.emit({ event: "workflowReplayed", pool: this.pool, workflowId: run.id, workflow: run.name, entries, durationMs });
  }
}

/** A journal entry whose outcome is given now, as a delivered step. */
export function deliveredRow(e: StepRow): DeliveredStep {
  return {
    n: e.n,
    kind: e.kind,
    name: e.name,
    outcome: storedOutcome(e)!,
    startedAt: e.startedAt,
    finishedAt: e.finishedAt ?? e.startedAt,
    workId: e.workId,
    childId: e.childId,
  };
}

/** When each step call of a kept execution was journaled: a step that ends in memory reports its duration from it. */
const callStarts = new WeakMap<StepCall, number>();

/** Records when `call` was journaled. */
export function noteCallStart(call: StepCall, at: number): void {
  callStarts.set(call, at);
}

/** A step that ended in memory (continued where its work finished), as a delivered step. */
export function deliveredCall(call: StepCall, outcome: StepOutcome, now: number): DeliveredStep | null {
  const startedAt = callStarts.get(call);
  if (startedAt === undefined || call.request.kind === "value") return null;
  const entry = requestEntry(call.request);
  return { n: call.n, kind: entry.kind, name: entry.name, outcome, startedAt, finishedAt: now, workId: null, childId: null };
}
