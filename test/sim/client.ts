/**
 * The application side of a run: enqueues (with priorities, keys, onComplete and its
 * excluded kinds), cancels, cancelAll, configure (limits and rate limits) and status
 * calls at random moments, and the process life cycle (crash, graceful stop, restart).
 * Calls are not awaited: they go on through the scheduler's steps like any other work.
 */
import { UnknownWorkError, type WorkId } from "../../src/index.js";
import type { ResultKind } from "../../src/types.js";
import type { Rng } from "./rng.js";
import type { SimProcess } from "./process.js";
import { drawRate } from "./run-config.js";
import type { Scheduler } from "./scheduler.js";
import { actionArgs, mutationArgs, type OcContext } from "./workload.js";

/** Makes the application's calls of one run. */
export class Client {
  private unpausing = false;

  constructor(private readonly s: Scheduler) {}

  /** One random application call from a random live process. */
  userStep(): void {
    const { rng, trace, wf } = this.s;
    const proc = rng.pick(this.s.live());
    if (wf && wf.rng.chance(0.5)) return wf.client.step(proc);
    // Not the workflows' own work: an application cancels runs, not their steps.
    const ids = wf ? trace.ids().filter((id) => !this.s.workflowRows.has(id)) : trace.ids();
    const what = rng.weighted({
      enqueue: 5,
      batch: 1,
      cancel: ids.length ? 2 : 0,
      // cancelAll() would cancel the workflows' own work too (their advances): not in runs with workflows.
      cancelAll: wf ? 0 : 0.3,
      configure: 1,
      status: ids.length ? 2 : 0,
    });
    const head = `${this.s.head()} ${proc.label}`;
    if (what === "enqueue" || what === "batch") return this.enqueue(proc, what === "batch", head);
    if (what === "cancel") {
      const id = rng.pick(ids);
      this.s.obs.cancelAsked.add(id);
      trace.add(`${head} cancel(${trace.label(id)})`);
      void this.s.track(proc, proc.pool.cancel(id as WorkId)).then(
        (did) => did && this.s.obs.canceledTrue.set(id, this.s.step),
        () => undefined,
      );
      return;
    }
    if (what === "cancelAll") {
      const before = this.s.time.now() + 1;
      this.s.obs.cancelAllCutoffs.push(before);
      trace.add(`${head} cancelAll`);
      void this.s.track(proc, proc.pool.cancelAll({ before })).catch(() => undefined);
      return;
    }
    if (what === "configure" && this.s.rated && this.s.rateRng.chance(0.6)) return this.configureRates(proc, head);
    if (what === "configure" && this.s.keys.length && rng.chance(0.5)) {
      const drawn = rng.weighted({ 1: 2, 2: 2, 3: 1, none: 1 });
      const keyParallelism = drawn === "none" ? null : Number(drawn);
      trace.add(`${head} configure keyParallelism ${keyParallelism}`);
      void this.s.track(proc, proc.pool.configure({ keyParallelism })).catch(() => undefined);
      return;
    }
    if (what === "configure") {
      const maxParallelism = rng.weighted({ 0: 1, 1: 2, 2: 2, 3: 1, 4: 1 });
      trace.add(`${head} configure maxParallelism ${maxParallelism}`);
      void this.s.track(proc, proc.pool.configure({ maxParallelism: Number(maxParallelism) })).catch(() => undefined);
      return;
    }
    const id = rng.pick(ids);
    trace.add(`${head} status(${trace.label(id)})`);
    void this.s.track(proc, proc.pool.status(id as WorkId)).then(
      (status) => this.s.obs.statuses.push({ id, status }),
      (e: unknown) => e instanceof UnknownWorkError && this.s.obs.statuses.push({ id, status: "unknown" }),
    );
  }

  /** configure() of rateLimit, keyRateLimit or both, each a new small limit or null. */
  private configureRates(proc: SimProcess, head: string): void {
    const r = this.s.rateRng;
    const which = this.s.keys.length ? r.weighted({ pool: 2, key: 2, both: 1 }) : "pool";
    const draw = () => (r.chance(0.25) ? null : drawRate(r));
    const options = {
      ...(which !== "key" ? { rateLimit: draw() } : {}),
      ...(which !== "pool" ? { keyRateLimit: draw() } : {}),
    };
    this.s.trace.add(`${head} configure ${JSON.stringify(options)}`);
    void this.s.track(proc, proc.pool.configure(options)).catch(() => undefined);
  }

  private enqueue(proc: SimProcess, batch: boolean, head: string): void {
    const { rng, trace } = this.s;
    const mutation = !batch && rng.chance(0.25);
    const options: Record<string, unknown> = {};
    if (rng.chance(0.25)) options.runAfter = rng.int(50, 3000);
    if (rng.chance(0.5)) {
      options.onComplete = proc.handlers.oc;
      const context: OcContext = { t: rng.weighted({ 0: 6, 1: 2, 2: 1 }) === "0" ? 0 : rng.int(1, 2) };
      if (rng.chance(0.35)) options.onCompleteExcludeKinds = context.x = excludedKinds(rng);
      options.context = context;
    }
    if (rng.chance(0.5)) options.priority = rng.pick([-1, 0, 1]);
    if (this.s.keys.length && rng.chance(0.7)) options.key = rng.pick(this.s.keys);
    if (!mutation && rng.chance(0.5)) options.retry = true;
    // No backoff: the next attempt is due at once, often claimed by the completion that ended the last.
    if (options.retry && this.s.timed && this.s.timingRng.chance(0.5)) options.retry = { maxAttempts: 3, initialBackoffMs: 0, base: 2 };
    const list = Array.from({ length: batch ? rng.int(2, 5) : 1 }, () => (mutation ? mutationArgs(rng) : actionArgs(rng)));
    // A hanging action ends only by its timeout (or a cancel).
    if (!mutation && list.some((a) => a.b === "hang")) options.timeoutMs = rng.int(100, 800);
    const { mut } = proc.handlers;
    const act = this.s.options.batchActions ? proc.handlers.actb : proc.handlers.act;
    const call = mutation
      ? proc.pool.enqueueMutation(mut, list[0]!, options).then((id) => [id])
      : batch
        ? proc.pool.enqueueActionBatch(act, list, options)
        : proc.pool.enqueueAction(act, list[0]!, options).then((id) => [id]);
    trace.add(`${head} enqueue ${list.map((a) => a.b).join(",")} ${JSON.stringify({ ...options, onComplete: undefined })}`);
    void this.s.track(proc, call).then(
      (ids) => {
        for (const id of ids) trace.label(id);
        this.s.obs.enqueued.push(...ids);
      },
      () => undefined,
    );
  }

  /** Crash, graceful stop, or (re)start of a process. */
  processStep(): void {
    const { rng, trace } = this.s;
    const live = this.s.live();
    const stoppable = live.filter((p) => p.started && !p.busy);
    const startable = live.filter((p) => !p.started && !p.busy && !p.stepped);
    const what = rng.weighted({
      crash: live.length ? 1 : 0,
      stop: stoppable.length ? 1 : 0,
      start: startable.length ? 1 : 0,
      spawn: live.length < this.s.slots ? 1 : 0,
      pause: live.length && this.s.faultRate > 0 ? 2 : 0,
    });
    if (what === "pause") {
      const p = rng.pick(live);
      p.pausedUntil = this.s.time.now() + this.s.config.leaseMs + rng.int(1, this.s.config.leaseMs);
      if (rng.chance(0.5)) p.heartbeatsHeldUntil = p.pausedUntil + this.s.config.leaseMs;
      return trace.add(`${this.s.head()} ${p.label} paused until t+${p.pausedUntil - this.s.time.start}`);
    }
    if (what === "crash") return this.s.kill(rng.pick(live), "killed");
    if (what === "start") return this.start(rng.pick(startable));
    if (what === "spawn") return void this.s.spawn();
    const p = rng.pick(stoppable);
    const timeoutMs = rng.int(0, 1500);
    p.busy = true;
    trace.add(`${this.s.head()} ${p.label} stop(${timeoutMs})`);
    void p.pool
      .stop({ timeoutMs })
      .then(
        () => (p.started = false),
        () => undefined,
      )
      .finally(() => (p.busy = false));
  }

  /** Starts a process's worker. */
  start(p: SimProcess): void {
    p.busy = true;
    this.s.trace.add(`${this.s.head()} ${p.label} start`);
    void p.pool
      .start()
      .then(
        () => (p.started = true),
        () => undefined,
      )
      .finally(() => (p.busy = false));
  }

  /** One runOnce() of a stepped process. */
  runOnce(p: SimProcess): void {
    p.busy = true;
    this.s.trace.add(`${this.s.head()} ${p.label} runOnce`);
    void p.pool
      .runOnce()
      .catch(() => undefined)
      .finally(() => (p.busy = false));
  }

  /** In the drain: a paused pool (maxParallelism 0) is resumed, once. */
  unpause(): void {
    if (this.unpausing) return;
    const config = this.s.storedConfig;
    if (!config || config.maxParallelism > 0) return;
    const p = this.s.live()[0]!;
    this.unpausing = true;
    this.s.trace.add(`${this.s.head()} ${p.label} configure maxParallelism 2 (drain)`);
    void this.s
      .track(p, p.pool.configure({ maxParallelism: 2 }))
      .catch(() => undefined)
      .finally(() => (this.unpausing = false));
  }
}

/** One or two distinct result kinds, for onCompleteExcludeKinds. */
function excludedKinds(rng: Rng): ResultKind[] {
  const kinds: ResultKind[] = ["success", "failed", "canceled"];
  const first = rng.pick(kinds);
  return rng.chance(0.3) ? [first, rng.pick(kinds.filter((k) => k !== first))] : [first];
}
