/**
 * The scheduler of a simulated run. Everything that happens is a step it draws from the
 * seed: run one queued store call (maybe with a fault; store-calls.ts), settle one action
 * attempt (actions.ts), move the clock, make an application call, crash, stop or restart
 * a process (client.ts). Between steps it waits until every process is idle again
 * (waiting on a store call, an action, a timer), so no two store calls overlap and a run
 * replays exactly; after each step that ran a store call it checks the invariants.
 */
import type { PoolConfig, WorkRow } from "../../src/driver/driver.js";
import { Actions } from "./actions.js";
import { Client } from "./client.js";
import {
  FAULT_KINDS,
  type ClaimSeen,
  type FaultKind,
  type HeartbeatSeen,
  type NewOp,
  type OpHost,
  type ProcHandle,
} from "./faulty-driver.js";
import { drain } from "./drain.js";
import { Holds } from "./holds.js";
import { Checker, clearStep, newObservations, Violation, type Observations } from "./invariants.js";
import { SimProcess, type ProcessConfig } from "./process.js";
import { Rng } from "./rng.js";
import { describeRun, drawRun } from "./run-config.js";
import { SimTime } from "./sim-clock.js";
import { StoreCalls } from "./store-calls.js";
import type { SimStore, Snapshot } from "./stores.js";
import { logLine, Trace } from "./trace.js";
import type { Variant } from "./variants.js";
import { isWorkflowRow } from "./wf-invariants.js";
import type { Operated } from "./wf-operator-checks.js";
import { WfRun, type WorkflowMode } from "./wf-run.js";
import type { WorkloadHooks } from "./workload.js";
import { T0 } from "../helpers/common.js";

/** Timers of no delay one process may set in a row, with no store call between, before it counts as busy-polling. */
const BUSY_TIMERS = 20;
let runCounter = 0;

/** What a scheduler runs. */
export interface SchedulerOptions {
  seed: number;
  store: SimStore;
  faults: readonly FaultKind[];
  processFaults: boolean;
  steps?: number;
  variant?: Variant;
  traceLines?: number;
  /** False: no rate limits, whatever the seed draws. */
  rates?: boolean;
  /** False: no holds and no retries without backoff, whatever the seed draws. */
  timing?: boolean;
  /** False: workflows without step.map, patches and the operator's actions. */
  extras?: boolean;
  /** Which runs have workflows (default `some`). */
  workflows?: WorkflowMode;
  /** Whether the application's actions are batch actions (default false). */
  batchActions?: boolean;
}

/** Steps one run. */
export class Scheduler implements OpHost {
  readonly trace: Trace;
  readonly rng: Rng;
  readonly time = new SimTime(T0);
  readonly config: ProcessConfig;
  readonly procs: SimProcess[] = [];
  readonly obs: Observations = newObservations();
  readonly slots: number;
  /** The keys work of this run may carry (none when empty). */
  readonly keys: readonly string[];
  /** Whether this run uses rate limits; `rateRng` draws them (runs without them never use it). */
  readonly rated: boolean;
  readonly rateRng: Rng;
  /**
   * Whether this run has holds (holds.ts) and retries without backoff; `timingRng` draws
   * them (runs without them never use it past this choice).
   */
  readonly timed: boolean;
  readonly timingRng: Rng;
  readonly holds: Holds;
  /** Fraction of store calls given a fault. */
  readonly faultRate: number;
  readonly options: SchedulerOptions;
  readonly store: SimStore;
  /** The run's workflows, or null in a run without them. */
  readonly wf: WfRun | null;
  draining = false;
  /** Application calls in flight, by process: the drain waits for those of live processes. */
  readonly calls = new Map<object, ProcHandle>();
  /** Bumped by anything a process does; settle() waits until it stops changing. */
  activity = 0;
  readonly storeCalls = new StoreCalls(this);
  readonly actions = new Actions(this);
  private readonly checker: Checker;
  readonly client: Client;
  private readonly hooks: WorkloadHooks;
  private readonly steps: number;
  private stepNo = 0;
  private lateResults = 0;
  /** The pool's stored configuration at the last check. */
  storedConfig: PoolConfig | null = null;
  private lastSnapshot: Snapshot | null = null;
  /** A broken invariant seen inside a handler, thrown at the end of the step. */
  private broken: Violation | null = null;
  /** Ids of the workflows' work (their steps, advances and timeouts), which the application leaves alone. */
  readonly workflowRows = new Set<string>();
  private crashCount = 0;
  /** Attempts started so far (the drain of a rate-limited run goes on while they grow). */
  starts = 0;
  private spawned = 0;
  private readonly reads = new Map<string, number>();

  constructor(options: SchedulerOptions) {
    this.options = options;
    this.trace = new Trace(options.traceLines);
    this.rng = new Rng(options.seed);
    this.rateRng = new Rng((options.seed ^ 0x5ca1ab1e) >>> 0);
    this.timingRng = new Rng((options.seed ^ 0x7e1d0c4a) >>> 0);
    this.timed = (options.timing ?? true) && this.timingRng.chance(0.5);
    this.holds = new Holds(this, this.timingRng, this.timed);
    // Process → variant (if any) → gate (where holds stop calls) → the real driver.
    const base = options.store;
    const gated = this.holds.gate.wrap(base.driver);
    this.store = { ...base, driver: options.variant ? options.variant.wrap(gated) : gated };
    const pool = `sim-${options.seed}-${++runCounter}`;
    const shape = drawRun(this.rng, this.rateRng, {
      pool,
      store: options.store.kind,
      faults: options.faults.length > 0,
      steps: options.steps,
      rates: options.rates,
    });
    this.slots = shape.slots;
    this.faultRate = shape.faultRate;
    this.wf = WfRun.draw(this, options.seed, options.workflows ?? "some", options.extras ?? true);
    // A workflow moves one store call at a time: its runs get a longer random phase, with its faults.
    this.steps = options.steps ?? shape.steps * (this.wf ? 3 : 1);
    this.config = shape.config;
    this.keys = shape.keys;
    this.rated = shape.rated;
    this.hooks = {
      store: this.store,
      pool,
      ocTries: new Map(),
      ocCalls: this.obs.ocCalls,
      actionStarted: (call) => this.actions.started(call),
      // Half the batch-action runs fill their batches for a while, on each process's clock.
      ...(options.batchActions ? { batchWaitMs: options.seed % 2 ? 0 : 300 } : {}),
    };
    this.checker = new Checker(this.config, (id) => this.trace.label(id), this.time.start);
    this.client = new Client(this);
    this.trace.add(describeRun(options.seed, shape));
    for (const line of this.wf?.describe() ?? []) this.trace.add(line);
  }

  /** Runs the random phase, then drains and checks the end. */
  async run(): Promise<void> {
    for (let i = 0; i < this.slots; i++) this.spawn();
    await this.endStep(true);
    for (let i = 0; i < this.steps; i++) {
      await this.randomStep();
      await this.endStep();
    }
    await drain(this);
    // The operator acts on what the drain left (finished and blocked runs); then it drains again.
    if (this.wf?.operateAfterDrain()) await drain(this);
  }

  /** Counts for the report. */
  figures(): {
    steps: number;
    works: number;
    faults: number;
    crashes: number;
    lateResults: number;
    runs: number;
    blocked: number;
    operated: Operated;
  } {
    const runs = this.lastSnapshot?.wf?.runs ?? [];
    return {
      steps: this.stepNo,
      works: this.trace.ids().length,
      faults: this.storeCalls.faults,
      crashes: this.crashCount,
      lateResults: this.lateResults,
      runs: runs.length,
      blocked: runs.filter((r) => r.state === "blocked").length,
      operated: { ...(this.wf?.operated ?? { restarts: 0, skips: 0, forks: 0 }) },
    };
  }

  /** Kills every process; the shared store stays open for the next run. */
  async dispose(): Promise<void> {
    for (const p of this.procs) p.dead = true;
    this.storeCalls.clear();
    await this.settle();
  }

  /** Reports a broken invariant seen inside a handler (the first one is thrown at the end of the step). */
  broke(v: Violation): void {
    this.broken ??= v;
  }

  /** Live processes. */
  live(): SimProcess[] {
    return this.procs.filter((p) => !p.dead);
  }

  /** Starts a new process (a restart after a crash gets a new one). */
  spawn(): SimProcess {
    const n = ++this.spawned;
    const stepped = this.rng.chance(0.25);
    const random = this.rng.fork();
    const wf = this.wf?.definer(this.crashCount > 0);
    const proc = new SimProcess(
      `p${n}${stepped ? "s" : ""}${wf?.changed ? "c" : ""}`,
      stepped,
      this.store,
      this,
      (p) =>
        this.time.view(
          () => !p.dead,
          () => this.activity++,
          (ms) => {
            if (ms <= 0) p.zeroTimers++;
          },
        ),
      () => random.next(),
      this.config,
      this.hooks,
      (p, level, message) => this.logged(p, level, message),
      wf?.define,
    );
    this.procs.push(proc);
    this.trace.add(`${this.head()} spawn ${proc.label}`);
    if (!stepped) this.client.start(proc);
    return proc;
  }

  /** Late results the pool ignored, leases it lost and rescues go to the trace. */
  private logged(p: SimProcess, _level: string, message: string): void {
    const line = p.dead ? null : logLine(message, (id) => this.trace.label(id));
    if (!line) return;
    if (line.late) this.lateResults++;
    this.trace.add(`${this.head()} ${p.label} ${line.text}`);
  }

  // ---- OpHost

  now(): number {
    return this.time.now();
  }

  queue(op: NewOp): void {
    this.storeCalls.queue(op);
  }

  heartbeat(seen: HeartbeatSeen): void {
    this.obs.heartbeats.push(seen);
    this.obs.workerIds.set(seen.proc, seen.workerId);
  }

  advanceRead(runId: string): void {
    this.reads.set(runId, this.advanceReads(runId) + 1);
  }

  /** How many times an advance read run `runId`'s journal. */
  advanceReads(runId: string): number {
    return this.reads.get(runId) ?? 0;
  }

  subscribe(proc: ProcHandle, _pool: string, onWake: () => void): () => void {
    return this.storeCalls.subscribe(proc, onWake);
  }

  claimed(seen: ClaimSeen): void {
    this.obs.claims.push(seen);
    this.starts += seen.claimed.length;
  }

  kill(proc: ProcHandle, why: string): void {
    const p = proc as SimProcess;
    if (p.dead) return;
    p.dead = true;
    this.crashCount++;
    this.storeCalls.drop(proc);
    this.trace.add(`${this.head()} CRASH ${proc.label} (${why})`);
  }

  /** Tracks an application call so the drain can wait for it. */
  track<T>(proc: ProcHandle, call: Promise<T>): Promise<T> {
    const key = {};
    this.calls.set(key, proc);
    void call.then(
      () => this.calls.delete(key),
      () => this.calls.delete(key),
    );
    return call;
  }

  /** The number of the current step. */
  get step(): number {
    return this.stepNo;
  }

  /** The trace prefix of the current step. */
  head(): string {
    return `#${this.stepNo} t+${this.time.now() - T0}`;
  }

  // ---- steps

  private async randomStep(): Promise<void> {
    const ops = this.storeCalls.eligible();
    const actions = this.actions.settleable();
    const live = this.live();
    const kind = this.rng.weighted({
      op: ops.length ? 10 : 0,
      action: actions.length ? 4 : 0,
      time: 3,
      user: live.length ? 3 : 0,
      proc: this.options.processFaults ? 1 : 0,
      runOnce: live.some((p) => p.stepped && !p.busy) ? 2 : 0,
    });
    if (kind === "op") return this.storeCalls.step(this.rng.pick(ops));
    if (kind === "action") return this.actions.settle(this.rng.pick(actions));
    if (kind === "time") return this.timeStep();
    if (kind === "user") return this.client.userStep();
    if (kind === "proc") return this.client.processStep();
    this.client.runOnce(this.rng.pick(live.filter((p) => p.stepped && !p.busy)));
  }

  private timeStep(): void {
    const next = this.time.nextTimerAt();
    const now = this.time.now();
    const how = this.rng.weighted({ next: 6, small: 3, jump: this.faultRate > 0 ? 1 : 0 });
    let ms = this.rng.int(1, 200);
    if (how === "next" && next !== null) ms = Math.max(0, next - now);
    if (how === "jump") ms = this.config.leaseMs + this.rng.int(1, this.config.leaseMs);
    this.trace.add(`${this.head()} time +${ms}${how === "jump" ? " (jump past the lease)" : ""}`);
    this.time.advance(ms);
  }

  /** Waits until every process is idle: several turns of the event loop with nothing new. */
  async settle(): Promise<void> {
    let quiet = 0;
    let last = -1;
    for (let i = 0; quiet < 4; i++) {
      if (i > 10_000) throw new Violation("nothing-lost", "the processes never went idle (a busy loop)");
      await new Promise<void>((r) => setImmediate(r));
      if (this.activity === last) quiet++;
      else {
        quiet = 0;
        last = this.activity;
      }
    }
  }

  /**
   * Settles, then reads the store and checks every invariant when a store call ran (only
   * those change the rows); returns the rows read, or null.
   */
  async endStep(force = false): Promise<WorkRow[] | null> {
    await this.settle();
    this.stepNo++;
    if (this.broken) throw this.broken;
    for (const p of this.live()) {
      if (p.zeroTimers > BUSY_TIMERS) {
        throw new Violation(
          "no-busy-poll",
          `${p.label} set ${p.zeroTimers} timers of no delay in a row without a store call: it polls in a busy loop`,
        );
      }
    }
    if (!force && !this.storeCalls.wrote) return null;
    this.storeCalls.wrote = false;
    const snapshot = await this.store.snapshot(this.config.pool, this.wf !== null);
    this.storedConfig = snapshot.config;
    this.lastSnapshot = snapshot;
    for (const r of snapshot.rows) {
      this.trace.label(r.id);
      if (this.wf && isWorkflowRow(r)) this.workflowRows.add(r.id);
    }
    this.checker.check(this.stepNo, this.time.now(), snapshot, this.obs);
    this.wf?.check(snapshot);
    clearStep(this.obs);
    return snapshot.rows;
  }

  /** The end of a drained run: every work finished and delivered, every run ended or waiting for good. */
  checkEnd(rows: WorkRow[]): void {
    this.checker.checkEnd(rows);
    this.wf?.checkEnd(this.lastSnapshot!);
  }
}

export { FAULT_KINDS };
