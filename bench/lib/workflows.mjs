// The workflow measurements, run inside one child process per step (see child.mjs). Each
// system that takes part offers `openWorkflows(ctx, { concurrency, onRunDone })` (see
// systems/workpool-workflows.mjs and systems/dbos.mjs).
import { performance } from "node:perf_hooks";
import { ADVANCE_FN } from "../systems/workpool-workflows.mjs";
import { cpuSince } from "./sql-floor.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Resolves once `condition()` holds, checking every `everyMs`; throws after `limitMs`. */
async function until(condition, what, limitMs, everyMs = 5) {
  const deadline = performance.now() + limitMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`gave up waiting for ${what} after ${limitMs} ms`);
    await sleep(everyMs);
  }
}

/** A promise that `done()` resolves the `n`th time, or `cap` after `capS` seconds. */
function counter(n, capS) {
  let count = 0;
  let finish;
  const all = new Promise((r) => (finish = r));
  const timer = setTimeout(() => finish(true), capS * 1000);
  return {
    done() {
      if (++count === n) finish(false);
    },
    get count() {
      return count;
    },
    /** Resolves with whether the cap was hit. */
    wait: () => all.finally(() => clearTimeout(timer)),
  };
}

/**
 * N runs of the four-step workflow (action, action, mutation, action), started as a
 * backlog, drained by one started worker. The clock and process.cpuUsage() run from just
 * before the worker starts until every run has ended in the store. `profiler` ({ start,
 * stop }, optional) is called around that region (workflow-profile.mjs).
 */
export async function workflowSide(system, ctx, { n, concurrency, capS, profiler }) {
  await system.reset(ctx);
  const seen = new Set();
  const runs = counter(n, capS);
  const side = await system.openWorkflows(ctx, {
    concurrency,
    onRunDone: (id) => {
      if (!seen.has(id)) {
        seen.add(id);
        runs.done();
      }
    },
  });
  try {
    await side.startFour(n);
    await profiler?.start();
    const t0 = performance.now();
    const cpu = process.cpuUsage();
    await side.start();
    const capped = await runs.wait();
    // Each function has returned: wait for the last ends to commit.
    if (!capped) await until(async () => (await side.unfinishedRuns()) === 0, "the runs to end", 60_000);
    const seconds = (performance.now() - t0) / 1000;
    const cpuUs = cpuSince(cpu);
    await profiler?.stop();
    const steps = (capped ? runs.count : n) * 4;
    return { steps, seconds, capped, rate: steps / seconds, cpuUsPerStep: cpuUs / steps };
  } finally {
    await side.close();
  }
}

/** The same 4 × N steps as plain work of the same handlers, enqueued as a backlog and drained by one started worker. */
export async function plainSide(system, ctx, { n, concurrency, capS, profiler }) {
  await system.reset(ctx);
  const side = await system.openWorkflows(ctx, { concurrency });
  const steps = counter(4 * n, capS);
  side.pool.on("completed", () => steps.done());
  try {
    await side.enqueuePlain(n);
    await profiler?.start();
    const t0 = performance.now();
    const cpu = process.cpuUsage();
    await side.start();
    const capped = await steps.wait();
    const seconds = (performance.now() - t0) / 1000;
    const cpuUs = cpuSince(cpu);
    await profiler?.stop();
    const done = capped ? steps.count : 4 * n;
    return { steps: done, seconds, capped, rate: done / seconds, cpuUsPerStep: cpuUs / done };
  } finally {
    await side.close();
  }
}

/**
 * The four-step workflow beside the same steps as plain work, in this one process (so the
 * ratio does not move with the machine); `plainFirst` alternates the order between
 * repetitions. A system without plain work (DBOS) measures the workflow only.
 */
export async function wfSteps(system, ctx, { n, concurrency, capS, plainFirst }) {
  // A queue system (one with the plain-work adapter, `open`) also drains the steps as plain work.
  const hasPlain = typeof system.open === "function";
  let plain = null;
  if (hasPlain && plainFirst) plain = await plainSide(system, ctx, { n, concurrency, capS });
  const workflow = await workflowSide(system, ctx, { n, concurrency, capS });
  if (hasPlain && !plainFirst) plain = await plainSide(system, ctx, { n, concurrency, capS });
  await system.reset(ctx);
  return { workflow, plain, cpuRatio: plain ? workflow.cpuUsPerStep / plain.cpuUsPerStep : null };
}

/** Heap in use after a forced full GC (the child runs with --expose-gc). */
function heapAfterGc() {
  if (typeof globalThis.gc !== "function") throw new Error("run with --expose-gc (lib/spawn.mjs passes it to every child)");
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
}

/**
 * `n` runs that sleep an hour: the heap of the started worker process (after a forced GC)
 * before the runs are started and once every run's first advance has run (each is
 * asleep, its sleep written as pending work), and the rows the store then holds.
 */
export async function wfSleepers(system, ctx, { n, capS }) {
  await system.reset(ctx);
  const side = await system.openWorkflows(ctx, { concurrency: 100 });
  const advanced = counter(n, capS);
  side.pool.on("completed", (e) => {
    if (e.fnName === ADVANCE_FN && e.status === "success") advanced.done();
  });
  try {
    await side.start();
    const before = heapAfterGc();
    const t0 = performance.now();
    await side.startRuns(side.flows.sleeper, n, () => null);
    const startS = (performance.now() - t0) / 1000;
    const capped = await advanced.wait();
    if (capped) throw new Error(`only ${advanced.count} of ${n} runs were asleep after ${capS} s`);
    const asleepS = (performance.now() - t0) / 1000;
    const after = heapAfterGc();
    const rows = await side.rows();
    if (rows.runs !== n || rows.workPending !== n)
      throw new Error(`expected ${n} runs and ${n} pending sleeps, got ${JSON.stringify(rows)}`);
    return {
      n,
      startS,
      asleepS,
      heapBeforeMb: before / 2 ** 20,
      heapAfterMb: after / 2 ** 20,
      bytesPerRun: (after - before) / n,
      keptInMemory: side.wf.internals.executions.size,
      rows,
    };
  } finally {
    await side.close();
  }
}

/** Small runs advanced first in the fresh process: warm-ups, then the one measured. */
const SMALL_RUNS = 3;

/**
 * Builds runs that wait for event "go" at the end of their journal: SMALL_RUNS after 1
 * step and one after `k`, of `kind` "now" (step.now() values) or "actions" (sequential
 * action steps). Returns their ids for wfReplayAdvance, which runs in a fresh process.
 */
export async function wfReplayBuild(system, ctx, { k, kind, capS }) {
  await system.reset(ctx);
  const side = await system.openWorkflows(ctx, { concurrency: 10 });
  try {
    const flow = kind === "now" ? side.flows.longNow : side.flows.longActions;
    const small = await side.startRuns(flow, SMALL_RUNS, () => ({ k: 1 }));
    const [big] = await side.startRuns(flow, 1, () => ({ k }));
    const t0 = performance.now();
    await side.start();
    const waiting = async (id, entries) => (await side.wf.status(id)).steps === entries;
    const all = async () => (await waiting(big, k + 1)) && (await Promise.all(small.map((id) => waiting(id, 2)))).every(Boolean);
    await until(all, "the runs to wait for their event", capS * 1000, 20);
    return { small, big, k, kind, buildS: (performance.now() - t0) / 1000 };
  } finally {
    await side.close();
  }
}

/**
 * In a fresh process (a new Workpool and WorkflowManager): sends "go" to each small run
 * and advances it with one runOnce() (the first ones warm this process's code paths, the
 * last is measured), then the same for the big one. Each advance replays the run's
 * journal. Times the runOnce() (claim, the advance, its completion) and its CPU; per entry
 * is (big - small) / (k - 1).
 */
export async function wfReplayAdvance(system, ctx, { small, big, k }) {
  const side = await system.openWorkflows(ctx, { concurrency: 10 });
  const handlerMs = new Map();
  side.pool.on("completed", (e) => {
    if (e.fnName === ADVANCE_FN) handlerMs.set(e.workId, e.durationMs);
  });
  const once = async (id, expected) => {
    await side.wf.sendEvent(id, "go", null);
    const t0 = performance.now();
    const cpu = process.cpuUsage();
    const r = await side.pool.runOnce();
    const ms = performance.now() - t0;
    const cpuMs = cpuSince(cpu) / 1000;
    const status = await side.wf.status(id);
    if (r.claimed !== 1 || status.state !== "success" || status.result !== expected)
      throw new Error(`run ${id}: one advance should end it with ${expected}; claimed ${r.claimed}, status ${JSON.stringify(status)}`);
    return { ms, cpuMs };
  };
  try {
    let s;
    for (const id of small) s = await once(id, 1);
    const b = await once(big, k);
    return {
      k,
      smallMs: s.ms,
      bigMs: b.ms,
      bigCpuMs: b.cpuMs,
      perEntryUs: ((b.ms - s.ms) * 1000) / (k - 1),
      handlerMs: [...handlerMs.values()],
    };
  } finally {
    await side.close();
  }
}
