/**
 * WorkflowManager: durable workflows on a pool. Each step of a run is ordinary work of the
 * pool; the run's journal (one entry per step call, in call order) is what makes it
 * durable. Every process that runs the pool's worker defines the same workflows, and a
 * started pool drives the runs it can.
 */
import { checkInt, checkOptionKeys, describeValue, optionKeys } from "../checks.js";
import type { Driver } from "../driver/driver.js";
import type { Maybe, RunRow } from "../driver/workflow-ops.js";
import { InvalidArgumentError } from "../errors.js";
import { newWorkId, toWorkId } from "../ids.js";
import { POOL_RUNTIME } from "../internal/runtime.js";
import { instanceDuties } from "../internal/instance-duties.js";
import { encodeJson, encodeOptionalJson } from "../json.js";
import type { Workpool } from "../workpool.js";
import { andThen, enqueueAdvance, type Definition, type Engine } from "./engine.js";
import { traceStart } from "./run-observe.js";
import { UnknownWorkflowError } from "./errors.js";
import { Executions } from "./executions.js";
import { WorkflowEvents } from "./observe.js";
import { WorkflowTracing } from "./telemetry.js";
import { cancelRun } from "./finish.js";
import { defineInternalHandlers } from "./internal-handlers.js";
import { toStatus, toStepInfo } from "./outcomes.js";
import type {
  DefineWorkflowOptions,
  ForkOptions,
  RestartOptions,
  SendEventOptions,
  StartOptions,
  WorkflowFn,
  WorkflowHandle,
  WorkflowStatus,
  WorkflowStepInfo,
} from "./types.js";
import { checkEventName, checkTimeoutMs, checkWorkflowId } from "./validate.js";
import { forkRun, restartRun, skipStep, writeEvent, type OperatorHost } from "./operate.js";
import { checkVersionOptions, VersionDuty } from "./versions.js";

/** Options of a WorkflowManager. */
export interface WorkflowManagerOptions {
  /** Most journal entries one run may have (default 100,000); a run that would pass it fails. */
  maxSteps?: number;
  /** Most bytes of args and outcomes in one run's journal (default 64 MiB); a run that would pass it fails. */
  maxJournalBytes?: number;
  /** Most runs this process keeps in memory between steps (default 10,000); others replay their journal. */
  keepInMemory?: number;
}

const MANAGER_KEYS = optionKeys<WorkflowManagerOptions>()({ maxSteps: true, maxJournalBytes: true, keepInMemory: true });
const DEFINE_KEYS = optionKeys<DefineWorkflowOptions>()({ timeoutMs: true, version: true, pinVersion: true });
const START_KEYS = optionKeys<StartOptions<unknown>>()({ workflowId: true, tx: true, onComplete: true, context: true });
const SEND_KEYS = optionKeys<SendEventOptions<unknown>>()({ tx: true });

/** Durable workflows on one pool. */
export class WorkflowManager<Tx = unknown, P extends string = string> {
  private readonly engine: Engine<Tx>;
  private readonly driver: Driver<Tx>;
  private readonly ready: () => Promise<void>;
  private readonly operator: OperatorHost<Tx>;

  constructor(pool: Workpool<Tx, P>, options?: WorkflowManagerOptions) {
    const internals = (pool as Partial<Workpool<Tx, P>> | null)?.[POOL_RUNTIME];
    if (!internals) throw new InvalidArgumentError("pool", "must be a Workpool");
    const o = (options === undefined ? {} : checkOptionKeys("options", options, MANAGER_KEYS, "WorkflowManager")) as WorkflowManagerOptions;
    const { rt } = internals;
    const events = new WorkflowEvents(rt.events, rt.pool);
    const tracing = new WorkflowTracing(rt.options.telemetry?.workflow ?? null, rt.pool);
    // Its transactions hold back the events and spans they write until they commit.
    this.driver = events.holding(rt.driver, () => tracing.enabled || events.wanted);
    this.ready = internals.ready;
    if (rt.handlers.get("workpool:workflow.advance")) {
      throw new InvalidArgumentError(
        "pool",
        `pool "${rt.pool}" already has a WorkflowManager; make one per pool and define every workflow on it`,
      );
    }
    let engine: Engine<Tx> | null = null;
    const handles = defineInternalHandlers(rt.handlers, this.driver, () => engine!);
    engine = {
      pool,
      rt,
      driver: this.driver,
      definitions: new Map(),
      handles,
      executions: new Executions(o.keepInMemory === undefined ? 10_000 : checkInt("options.keepInMemory", o.keepInMemory, 0, 1_000_000)),
      maxSteps: o.maxSteps === undefined ? 100_000 : checkInt("options.maxSteps", o.maxSteps, 1, 10_000_000),
      maxJournalBytes:
        o.maxJournalBytes === undefined ? 64 * 1024 * 1024 : checkInt("options.maxJournalBytes", o.maxJournalBytes, 1024, 2 ** 40),
      events,
      tracing,
    };
    this.engine = engine;
    this.operator = managerOperator(engine);
    instanceDuties(rt).add(new VersionDuty(engine));
  }

  /** Defines workflow `name` (once per manager). Every worker process of the pool defines it too. */
  define<A, R>(name: string, fn: WorkflowFn<A, R, P>, options?: DefineWorkflowOptions): WorkflowHandle<A, Awaited<R>, P> {
    const checked = checkName(name);
    if (typeof fn !== "function") throw new InvalidArgumentError("define(fn)", "must be a function (step, args) => result");
    if (this.engine.definitions.has(checked))
      throw new InvalidArgumentError("define(name)", `workflow "${checked}" is already defined; each name may be defined once`);
    const o = (options === undefined ? {} : checkOptionKeys("options", options, DEFINE_KEYS, "define()")) as DefineWorkflowOptions;
    const def: Definition = {
      name: checked,
      fn: fn as WorkflowFn<unknown, unknown>,
      timeoutMs: o.timeoutMs === undefined ? null : checkTimeoutMs("options.timeoutMs", o.timeoutMs),
      ...checkVersionOptions(o),
    };
    this.engine.definitions.set(checked, def);
    return Object.freeze({ kind: "workflow", name: checked, pool: this.engine.rt.pool as P }) as WorkflowHandle<A, Awaited<R>, P>;
  }

  /**
   * Starts a run of `workflow` with `args`; resolves with its id once committed (or written
   * into `tx`). A `workflowId` that a run already has starts nothing and resolves with it.
   */
  start<A, R, C = unknown>(workflow: WorkflowHandle<A, R, P>, args: A, options?: StartOptions<Tx, C>): Promise<string> {
    const throwsSync = this.driver.synchronousTx && hasTx(options);
    try {
      const o = (options === undefined ? {} : checkOptionKeys("options", options, START_KEYS, "start()")) as StartOptions<Tx, C>;
      const def = this.definition("workflow", workflow);
      const now = this.engine.rt.options.clock.now();
      const id = o.workflowId === undefined ? newWorkId(now) : checkWorkflowId("options.workflowId", o.workflowId);
      const onComplete =
        o.onComplete === undefined ? null : this.engine.rt.handlers.checkHandle("options.onComplete", o.onComplete, "mutation");
      if (o.context !== undefined && onComplete === null)
        throw new InvalidArgumentError("options.context", "is only given to onComplete; give onComplete too");
      const deadline = def.timeoutMs === null ? null : now + def.timeoutMs;
      const run = {
        id,
        pool: this.engine.rt.pool,
        name: def.name,
        args: encodeJson("args", args),
        onComplete,
        context: encodeOptionalJson("options.context", o.context),
        parentId: null,
        parentStep: null,
        deadline,
        version: def.version,
        pinned: def.pinned,
        timeoutMs: def.timeoutMs,
        now,
        trace: null as string | null,
      };
      let inserted = false;
      const write = (tx: Tx): Maybe<unknown> =>
        andThen(this.driver.workflows(tx).insertRun(run), (written) => {
          if (!(inserted = written)) return undefined;
          const writes: Promise<unknown>[] = [enqueueAdvance(this.engine, tx, id)];
          if (deadline !== null)
            writes.push(this.engine.pool.enqueueMutation(this.engine.handles.runTimeout, { r: id }, { tx, runAt: deadline }));
          return Promise.all(writes);
        });
      const started = (): string => {
        if (inserted) this.engine.events.started(run, now);
        return id;
      };
      if (o.tx !== undefined) {
        // On SQLite the caller's transaction is synchronous: write before returning.
        if (this.driver.synchronousTx) return Promise.resolve(traceStart(this.engine, run, () => write(o.tx as Tx))).then(started);
        return this.ready()
          .then(() => traceStart(this.engine, run, () => write(o.tx as Tx)))
          .then(started);
      }
      return this.ready()
        .then(() => traceStart(this.engine, run, () => this.driver.transaction((ops) => Promise.resolve(write(ops.tx)))))
        .then(started);
    } catch (e) {
      if (throwsSync) throw e;
      return Promise.reject(e);
    }
  }

  /**
   * Sends event `name` with `payload` to run `workflowId`: the oldest awaitEvent waiting for
   * it takes it, or the first to wait for it later. A run that does not exist, or has
   * finished, is refused (UnknownWorkflowError, InvalidArgumentError).
   */
  sendEvent(workflowId: string, name: string, payload?: unknown, options?: SendEventOptions<Tx>): Promise<void> {
    const throwsSync = this.driver.synchronousTx && hasTx(options);
    try {
      const o = (options === undefined ? {} : checkOptionKeys("options", options, SEND_KEYS, "sendEvent()")) as { tx?: Tx };
      const id = checkWorkflowId("workflowId", workflowId);
      const event = checkEventName("name", name);
      const body = encodeJson("payload", payload === undefined ? null : payload);
      const write = (tx: Tx): Maybe<unknown> => writeEvent(this.operator, tx, id, event, body);
      if (o.tx !== undefined) {
        if (this.driver.synchronousTx) return Promise.resolve(write(o.tx)).then(() => undefined);
        return this.ready()
          .then(() => write(o.tx as Tx))
          .then(() => undefined);
      }
      return this.ready()
        .then(() => this.driver.transaction((ops) => Promise.resolve(write(ops.tx))))
        .then(() => undefined);
    } catch (e) {
      if (throwsSync) throw e;
      return Promise.reject(e);
    }
  }

  /**
   * Cancels a run: its pending steps are canceled, running action steps get their signal
   * aborted, child runs are canceled, and its function sees a WorkflowCanceledError at its
   * current await (a `finally` may still run steps); onComplete then gets `canceled`.
   * Resolves false for a run already finished or being canceled.
   */
  async cancel(workflowId: string): Promise<boolean> {
    const id = checkWorkflowId("workflowId", workflowId);
    await this.ready();
    return this.driver.transaction(async (ops) => {
      if (!(await this.driver.workflows(ops.tx).lockRun(id))) throw new UnknownWorkflowError(id);
      return cancelRun(this.engine, ops, id, "cancel", this.engine.rt.options.clock.now());
    });
  }

  /** A run's state, result or error, and why it is blocked if it is. */
  async status(workflowId: string): Promise<WorkflowStatus> {
    return toStatus(await this.read(workflowId));
  }

  /** A run's journal: one entry per step call, in call order. */
  async steps(workflowId: string): Promise<WorkflowStepInfo[]> {
    const run = await this.read(workflowId);
    return (await this.driver.workflows().readSteps(run.id)).map(toStepInfo);
  }

  /**
   * Continues a failed, canceled or blocked run from step `from`: entries before it are
   * kept (their work is not run again), entries from it on are dropped and run again by the
   * function, with the code as it is now. Its onComplete runs again when it finishes.
   */
  async restart(workflowId: string, options: RestartOptions): Promise<void> {
    const id = checkWorkflowId("workflowId", workflowId);
    await this.ready();
    await restartRun(this.operator, id, options, "restart()");
  }

  /**
   * A new run of the same workflow and args whose journal is a copy of run `workflowId`'s
   * entries before `from` (each must have finished): its function goes on from its call
   * `from`, with the code as it is now. The source, in any state, is not changed. The fork
   * has no onComplete and no parent. Resolves with the new run's id.
   */
  async fork(workflowId: string, options: ForkOptions): Promise<string> {
    const id = checkWorkflowId("workflowId", workflowId);
    await this.ready();
    return forkRun(this.operator, id, options, "fork()");
  }

  /**
   * Lets a blocked run go on without the journal entry it is blocked at: that entry is
   * dropped (its open work canceled), later entries move down by one, and the function
   * replays against the journal without it. For a step the code no longer makes.
   */
  async skip(workflowId: string): Promise<void> {
    const id = checkWorkflowId("workflowId", workflowId);
    await this.ready();
    await skipStep(this.operator, id);
  }

  /** @internal The engine, for tests and the bench. */
  get internals(): Engine<Tx> {
    return this.engine;
  }

  private async read(workflowId: string): Promise<RunRow> {
    const id = checkWorkflowId("workflowId", workflowId);
    await this.ready();
    const run = await this.driver.workflows().readRun(id);
    if (!run) throw new UnknownWorkflowError(id);
    return run;
  }

  private definition(field: string, handle: unknown): Definition {
    const h = handle as Partial<WorkflowHandle<unknown, unknown>> | null;
    const def =
      typeof h === "object" && h !== null && h.kind === "workflow" && typeof h.name === "string"
        ? this.engine.definitions.get(h.name)
        : undefined;
    if (!def || h!.pool !== this.engine.rt.pool)
      throw new InvalidArgumentError(field, `must be a workflow this manager defined, got ${describeValue(handle)}`);
    return def;
  }
}

/** Whether call options carry a `tx` (read before they are checked). */
function hasTx(options: unknown): boolean {
  return typeof options === "object" && options !== null && (options as { tx?: unknown }).tx !== undefined;
}

function checkName(name: unknown): string {
  if (typeof name !== "string" || name.length === 0 || name.length > 200 || !/^[A-Za-z0-9_.:\-/]+$/.test(name)) {
    throw new InvalidArgumentError(
      "define(name)",
      `must be 1 to 200 characters of letters, digits and _ . : - /, got ${describeValue(name)}`,
    );
  }
  return name;
}

/** The operator's actions as a manager takes them: through its pool, on runs of its pool. */
function managerOperator<Tx>(engine: Engine<Tx>): OperatorHost<Tx> {
  const now = (): number => engine.rt.options.clock.now();
  return {
    driver: engine.driver,
    idField: "workflowId",
    now,
    checkRun(run) {
      if (run.pool !== engine.rt.pool) {
        throw new InvalidArgumentError(
          "workflowId",
          `run ${run.id} belongs to pool "${run.pool}", not "${engine.rt.pool}"; use that pool's WorkflowManager or the admin API`,
        );
      }
    },
    enqueueAdvance: (tx, run) => engine.tracing.within(run, () => enqueueAdvance(engine, tx, run.id)),
    enqueueTimeout: (tx, run, deadline) => engine.pool.enqueueMutation(engine.handles.runTimeout, { r: run.id }, { tx, runAt: deadline }),
    cancelWork: (_ops, _pool, workId) => engine.pool.cancel(toWorkId(workId)),
    cancelChild: (ops, _pool, childId) => cancelRun(engine, ops, childId, "cancel", now()),
    forget: (runId) => engine.executions.drop(runId),
  };
}
