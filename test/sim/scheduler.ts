/**
 * The scheduler of a simulated run. Everything that happens is a step it draws from the
 * seed: run one queued store call (maybe with a fault), settle one action attempt, move
 * the clock, make an application call, crash, stop or restart a process. Between steps
 * it waits until every process is idle again (waiting on a store call, an action, a
 * timer), so no two store calls overlap and a run replays exactly.
 */
import type { PoolConfig, WorkRow } from "../../src/driver/driver.js";
import { Client } from "./client.js";
import { FAULT_KINDS, type FaultKind, type OpHost, type ProcHandle, type SimOp } from "./faulty-driver.js";
import { Checker, Violation, type Observations } from "./invariants.js";
import { SimProcess, type ProcessConfig } from "./process.js";
import { Rng } from "./rng.js";
import { SimTime } from "./sim-clock.js";
import type { SimStore } from "./stores.js";
import { Trace } from "./trace.js";
import type { Variant } from "./variants.js";
import { settleAction, type ActionCall, type WorkloadHooks } from "./workload.js";

/** Store calls after which the store would signal waiting workers (insert, config change). */
const WAKES = new Set(["insertWork", "insertAndClaim", "ensurePool"]);
/** Longest real time one store call may take before the run counts as deadlocked. */
const CALL_DEADLINE_MS = 15_000;
const DRAIN_STEPS = 3000;
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
}

/** Steps one run. */
export class Scheduler implements OpHost {
  readonly trace: Trace;
  readonly rng: Rng;
  readonly time = new SimTime(Date.UTC(2030, 0, 1));
  readonly config: ProcessConfig;
  readonly procs: SimProcess[] = [];
  readonly actions: ActionCall[] = [];
  readonly obs: Observations = {
    canceledTrue: new Map(),
    cancelAsked: new Set(),
    cancelAllCutoffs: [],
    statuses: [],
    enqueued: [],
    started: [],
  };
  readonly slots: number;
  /** Fraction of store calls given a fault. */
  readonly faultRate: number;
  readonly options: SchedulerOptions;
  readonly store: SimStore;
  draining = false;
  /** Application calls in flight, by process: the drain waits for those of live processes. */
  readonly calls = new Map<object, ProcHandle>();
  private ops: SimOp[] = [];
  private seq = 0;
  private activity = 0;
  private wakers: { proc: ProcHandle; onWake: () => void }[] = [];
  private readonly checker: Checker;
  private readonly client: Client;
  private readonly hooks: WorkloadHooks;
  private readonly steps: number;
  private stepNo = 0;
  private faultCount = 0;
  private lateResults = 0;
  /** The pool's stored configuration at the last check. */
  storedConfig: PoolConfig | null = null;
  /** Set when a store call ran since the last check. */
  private wrote = false;
  private crashCount = 0;
  private spawned = 0;

  constructor(options: SchedulerOptions) {
    this.options = options;
    this.trace = new Trace(options.traceLines);
    this.rng = new Rng(options.seed);
    const base = options.store;
    this.store = options.variant ? { ...base, driver: options.variant.wrap(base.driver) } : base;
    const pool = `sim-${options.seed}-${++runCounter}`;
    this.slots = this.rng.int(1, 4);
    this.faultRate = options.faults.length ? this.rng.pick([0, 0.04, 0.1, 0.2]) : 0;
    this.steps = options.steps ?? this.rng.int(20, 70);
    this.config = {
      pool,
      maxParallelism: this.rng.int(1, 4),
      leaseMs: 1000,
      retentionMs: this.rng.pick([0, 1500, 60_000]),
      pollIntervalMs: options.store.kind === "sqlite" ? this.rng.pick([200, 1000]) : this.rng.pick([500, 2000]),
      maintenanceIntervalMs: this.rng.pick([200, 500]),
      ...(this.rng.chance(0.3) ? { concurrency: this.rng.int(1, 2) } : {}),
    };
    this.hooks = { store: this.store, pool, ocTries: new Map(), actionStarted: (call) => this.actionStarted(call) };
    this.checker = new Checker(this.config.retentionMs, (id) => this.trace.label(id));
    this.client = new Client(this);
    this.trace.add(
      `seed ${options.seed}: ${this.slots} process(es), maxParallelism ${this.config.maxParallelism}, retention ${this.config.retentionMs} ms, fault rate ${this.faultRate}${this.config.concurrency ? `, concurrency ${this.config.concurrency}` : ""}`,
    );
  }

  /** Runs the random phase, then drains and checks the end. */
  async run(): Promise<void> {
    for (let i = 0; i < this.slots; i++) this.spawn();
    await this.endStep(true);
    for (let i = 0; i < this.steps; i++) {
      await this.randomStep();
      await this.endStep();
    }
    await this.drain();
  }

  /** Counts for the report. */
  figures(): { steps: number; works: number; faults: number; crashes: number; lateResults: number } {
    return {
      steps: this.stepNo,
      works: this.trace.ids().length,
      faults: this.faultCount,
      crashes: this.crashCount,
      lateResults: this.lateResults,
    };
  }

  /** Kills every process; the shared store stays open for the next run. */
  async dispose(): Promise<void> {
    for (const p of this.procs) p.dead = true;
    this.ops = [];
    this.wakers = [];
    await this.settle();
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
    const proc = new SimProcess(
      `p${n}${stepped ? "s" : ""}`,
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
    );
    this.procs.push(proc);
    this.trace.add(`${this.head()} spawn ${proc.label}`);
    if (!stepped) this.client.start(proc);
    return proc;
  }

  /** Late results the pool ignored, leases it lost and rescues go to the trace. */
  private logged(p: SimProcess, _level: string, message: string): void {
    if (p.dead) return;
    const m = /ignoring the result of (\w+) attempt (\d+)|lost the lease of (\w+) attempt (\d+)|rescued (\d+) attempt/.exec(message);
    if (!m) return;
    if (m[1]) this.lateResults++;
    const what = m[1]
      ? `ignored the late result of ${this.trace.label(m[1])}#${m[2]}`
      : m[3]
        ? `lost the lease of ${this.trace.label(m[3])}#${m[4]}`
        : `rescued ${m[5]}`;
    this.trace.add(`${this.head()} ${p.label} ${what}`);
  }

  // ---- OpHost

  queue(op: Omit<SimOp, "seq" | "notBefore">): void {
    this.ops.push({ ...op, seq: this.seq++, notBefore: 0 });
    (op.proc as SimProcess).zeroTimers = 0;
    this.activity++;
  }

  subscribe(proc: ProcHandle, _pool: string, onWake: () => void): () => void {
    const w = { proc, onWake };
    this.wakers.push(w);
    return () => (this.wakers = this.wakers.filter((x) => x !== w));
  }

  kill(proc: ProcHandle, why: string): void {
    const p = proc as SimProcess;
    if (p.dead) return;
    p.dead = true;
    this.crashCount++;
    this.ops = this.ops.filter((o) => o.proc !== proc);
    this.wakers = this.wakers.filter((w) => w.proc !== proc);
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
    return `#${this.stepNo} t+${this.time.now() - Date.UTC(2030, 0, 1)}`;
  }

  // ---- steps

  private actionStarted(call: ActionCall): void {
    this.actions.push(call);
    this.activity++;
    this.obs.started.push({ id: call.workId, attempt: call.attempt, step: this.stepNo });
    this.trace.add(`${this.head()} ${call.procLabel} starts ${this.trace.label(call.workId)}#${call.attempt} (${call.args.b})`);
    call.signal.addEventListener("abort", () => this.dropAction(call), { once: true });
  }

  private dropAction(call: ActionCall): void {
    const i = this.actions.indexOf(call);
    if (i >= 0) this.actions.splice(i, 1);
  }

  /** Actions a step may settle: of live processes, not hanging. */
  private settleable(): ActionCall[] {
    const now = this.time.now();
    const live = new Set(
      this.live()
        .filter((p) => this.draining || p.pausedUntil <= now)
        .map((p) => p.label),
    );
    return this.actions.filter((a) => live.has(a.procLabel) && a.args.b !== "hang");
  }

  private eligibleOps(): SimOp[] {
    const now = this.time.now();
    const held = (o: SimOp): boolean => {
      const p = o.proc as SimProcess;
      return o.notBefore > now || p.pausedUntil > now || (o.method === "heartbeat" && p.heartbeatsHeldUntil > now);
    };
    return this.ops.filter((o) => this.draining || !held(o));
  }

  private async randomStep(): Promise<void> {
    const ops = this.eligibleOps();
    const actions = this.settleable();
    const live = this.live();
    const kind = this.rng.weighted({
      op: ops.length ? 10 : 0,
      action: actions.length ? 4 : 0,
      time: 3,
      user: live.length ? 3 : 0,
      proc: this.options.processFaults ? 1 : 0,
      runOnce: live.some((p) => p.stepped && !p.busy) ? 2 : 0,
    });
    if (kind === "op") return this.opStep(this.rng.pick(ops));
    if (kind === "action") return this.settle1(this.rng.pick(actions));
    if (kind === "time") return this.timeStep();
    if (kind === "user") return this.client.userStep();
    if (kind === "proc") return this.client.processStep();
    this.client.runOnce(this.rng.pick(live.filter((p) => p.stepped && !p.busy)));
  }

  private async opStep(op: SimOp): Promise<void> {
    if (op.method === "heartbeat" && this.faultRate > 0 && this.rng.chance(0.2)) {
      op.notBefore = this.time.now() + this.config.leaseMs * (1 + this.rng.next());
      this.trace.add(`${this.head()} ${op.proc.label} heartbeat delayed`);
      return;
    }
    let fault: FaultKind | null = null;
    if (this.faultRate > 0 && this.rng.chance(this.faultRate)) {
      const allowed = this.options.faults.filter((f) => this.options.processFaults || !f.startsWith("crash"));
      if (allowed.length) fault = this.rng.pick(allowed);
      if (fault === "crashInside" && op.method !== "transaction") fault = "crashBefore";
    }
    await this.execute(op, fault);
  }

  /** Runs one queued store call with `fault`. */
  private async execute(op: SimOp, fault: FaultKind | null): Promise<void> {
    this.ops = this.ops.filter((o) => o !== op);
    if (op.proc.dead) return;
    if (fault) this.faultCount++;
    this.wrote = true;
    const what = `${this.head()} ${op.proc.label} ${op.method}${fault ? ` !${fault}` : ""}`;
    if (fault === "crashBefore") return this.kill(op.proc, `before ${op.method}`);
    if (fault === "failBefore" || fault === "dropBefore") {
      this.trace.add(`${what} → error`);
      return op.reject(fault === "failBefore" ? new Error(`sim: ${op.method} failed`) : this.store.connectionError());
    }
    const crashAt = fault === "crashInside" ? this.rng.int(1, 4) : null;
    let failed = false;
    let value: unknown;
    try {
      value = await deadline(op.run(crashAt), `${op.proc.label} ${op.method}`);
    } catch (e) {
      if (e instanceof Violation) throw e;
      failed = true;
      value = e;
    }
    this.trace.add(
      `${what} → ${failed ? `error ${String((value as Error)?.message ?? value).slice(0, 80)}` : summary(op.method, value, this.trace)}`,
    );
    if (!failed && WAKES.has(op.method)) for (const w of [...this.wakers]) if (!w.proc.dead) w.onWake();
    if (fault === "crashAfter" || fault === "crashInside") return this.kill(op.proc, `after ${op.method}`);
    if (fault === "failAfter") return op.reject(new Error(`sim: the answer to ${op.method} was lost`));
    if (fault === "dropAfter") return op.reject(this.store.connectionError());
    if (failed) op.reject(value);
    else op.resolve(value);
  }

  private settle1(call: ActionCall): void {
    this.dropAction(call);
    this.trace.add(`${this.head()} ${call.procLabel} ends ${this.trace.label(call.workId)}#${call.attempt} (${call.args.b})`);
    settleAction(call);
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
  private async endStep(force = false): Promise<WorkRow[] | null> {
    await this.settle();
    this.stepNo++;
    for (const p of this.live()) {
      if (p.zeroTimers > BUSY_TIMERS) {
        throw new Violation(
          "no-busy-poll",
          `${p.label} set ${p.zeroTimers} timers of no delay in a row without a store call: it polls in a busy loop`,
        );
      }
    }
    if (!force && !this.wrote) return null;
    this.wrote = false;
    const pool = this.config.pool;
    const { rows, config, apps, ocs } = await this.store.snapshot(pool);
    this.storedConfig = config;
    for (const r of rows) this.trace.label(r.id);
    this.checker.check(this.stepNo, this.time.now(), rows, config, apps, ocs, this.obs);
    this.obs.statuses = [];
    this.obs.enqueued = [];
    this.obs.started = [];
    return rows;
  }

  /** No more faults or application calls: run until every work finished and was delivered. */
  private async drain(): Promise<void> {
    this.draining = true;
    this.trace.add(`${this.head()} drain`);
    for (let i = 0; i < DRAIN_STEPS; i++) {
      await this.drainStep();
      const rows = await this.endStep();
      if (!rows) continue;
      const calls = [...this.calls.values()].some((p) => !p.dead);
      if (!calls && rows.every((r) => r.state === "finished" && r.ocState !== "pending")) return this.checker.checkEnd(rows);
    }
    const rows = await this.endStep(true);
    this.checker.checkEnd(rows!);
  }

  private async drainStep(): Promise<void> {
    if (!this.live().length) this.spawn();
    this.client.unpause();
    const ops = this.eligibleOps();
    if (ops.length) return this.execute(this.rng.pick(ops), null);
    const actions = this.settleable();
    if (actions.length) return this.settle1(this.rng.pick(actions));
    const stopped = this.live().filter((p) => !p.busy && !p.stepped && !p.started);
    if (stopped.length) return this.client.start(this.rng.pick(stopped));
    const stepped = this.live().filter((p) => !p.busy && p.stepped);
    if (stepped.length && this.rng.chance(0.5)) return this.client.runOnce(this.rng.pick(stepped));
    const next = this.time.nextTimerAt();
    this.time.advance(next === null ? 100 : Math.max(1, next - this.time.now()));
  }
}

/** A short text of a store call's answer. */
function summary(method: string, value: unknown, trace: Trace): string {
  const claimed = (value as { claimed?: WorkRow[] } | null)?.claimed;
  if (Array.isArray(claimed)) return claimed.length ? `claimed ${claimed.map((r) => `${trace.label(r.id)}#${r.attempt}`).join(" ")}` : "ok";
  if (method === "insertWork" && Array.isArray(value)) return `ok ${value.map((id) => trace.label(String(id))).join(" ")}`;
  if (method === "insertAndClaim" && value) return `claimed ${trace.label((value as WorkRow).id)}`;
  return "ok";
}

/** Fails the run when a store call does not answer in real time: a deadlock. */
async function deadline<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Violation("nothing-lost", `${what} did not answer in ${CALL_DEADLINE_MS} ms (deadlock)`)),
      CALL_DEADLINE_MS,
    );
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

export { FAULT_KINDS };
