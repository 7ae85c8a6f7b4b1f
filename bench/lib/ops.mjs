// The measurements, as run inside one child process per step. Every system goes
// through the same adapter interface (see systems/index.mjs), so each number below is
// taken the same way for every system.
import { performance } from "node:perf_hooks";
import { BATCH_SIZE } from "./env.mjs";
import { commitFor, openCommitter } from "./commit-rate.mjs";
import { cpuSince } from "./sql-floor.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function chunks(from, to, size) {
  const out = [];
  for (let start = from; start < to; start += size) {
    const list = [];
    for (let i = start; i < Math.min(to, start + size); i++) list.push({ i });
    out.push(list);
  }
  return out;
}

/**
 * Enqueues up to `n` jobs one call at a time, each awaited (one commit per job), for at
 * most `capS` seconds of enqueueing. With `reference` (a kind from commit-rate.mjs), the
 * work is cut into `segments`, and after each one this process commits single rows to
 * the reference store for as long as that segment took: the two rates are measured at
 * the same moments, so machine drift cancels out of their ratio.
 *
 * Both first run unmeasured for `warmUpS` seconds each (at least 10 calls): connections
 * and prepared statements, and the JIT compiling the code both paths run. The
 * reference shares its driver with the system measured (the same pg or better-sqlite3
 * code), so without a warm-up the system's first segment would pay that compilation
 * while every reference segment ran warm.
 */
export async function enqueueOne(system, ctx, { n, capS = Infinity, reference = null, segments = 10, warmUpS = 0 }) {
  const client = await system.open(ctx, {});
  const committer = reference ? await openCommitter(reference, ctx.dir) : null;
  try {
    await callUnmeasured(() => client.enqueueOne({ i: -1 }), warmUpS);
    if (committer) await callUnmeasured(() => committer.commit(-1), warmUpS);
    const perSegment = committer ? Math.ceil(n / segments) : n;
    let i = 0;
    let seconds = 0;
    const ref = { n: 0, seconds: 0 };
    let cpuUs = 0;
    while (i < n && seconds < capS) {
      const t0 = performance.now();
      const cpu = process.cpuUsage();
      const until = t0 + (capS - seconds) * 1000;
      const end = Math.min(n, i + perSegment);
      while (i < end) {
        await client.enqueueOne({ i });
        i++;
        if (performance.now() > until) break;
      }
      const took = performance.now() - t0;
      cpuUs += cpuSince(cpu);
      seconds += took / 1000;
      if (committer) {
        const r = await commitFor(committer, took);
        ref.n += r.n;
        ref.seconds += r.seconds;
      }
    }
    const rate = i / seconds;
    const refRate = committer ? ref.n / ref.seconds : null;
    return { n, done: i, capped: i < n, seconds, rate, refRate, ofRef: refRate ? rate / refRate : null, cpuUsPerJob: cpuUs / i };
  } finally {
    await committer?.close();
    await client.close();
  }
}

/** Calls `op` one call at a time for `seconds` (at least 10 calls), unmeasured. */
async function callUnmeasured(op, seconds) {
  const until = performance.now() + seconds * 1000;
  for (let w = 0; w < 10 || performance.now() < until; w++) await op();
}

/** Enqueues up to `n` jobs in calls of `batch`, each awaited, for at most `capS` seconds. */
export async function enqueueBatch(system, ctx, { n, batch = BATCH_SIZE, capS = Infinity, warmUp = true }) {
  const client = await system.open(ctx, {});
  try {
    if (warmUp) await client.enqueueBatch([{ i: -1 }]); // warm up
    const lists = chunks(0, n, batch);
    const t0 = performance.now();
    const cpu = process.cpuUsage();
    const until = t0 + capS * 1000;
    let done = 0;
    for (const list of lists) {
      await client.enqueueBatch(list);
      done += list.length;
      if (performance.now() > until) break;
    }
    const seconds = (performance.now() - t0) / 1000;
    return { n, done, capped: done < n, seconds, rate: done / seconds, cpuUsPerJob: cpuSince(cpu) / done };
  } finally {
    await client.close();
  }
}

/**
 * The backlog of the keyed drain: `n` jobs over `keys` keys (job i has key `k{i % keys}`)
 * with mixed priorities (-5, 0 or 5 by turns, so each key holds all three), written in
 * calls of `batch` through the system's enqueueKeyedBatch. Unmeasured.
 */
export async function enqueueKeyed(system, ctx, { n, keys, batch }) {
  const client = await system.open(ctx, {});
  try {
    for (let start = 0; start < n; start += batch) {
      const list = [];
      for (let i = start; i < Math.min(n, start + batch); i++) list.push({ i, key: `k${i % keys}`, priority: [-5, 0, 5][i % 3] });
      await client.enqueueKeyedBatch(list);
    }
    return { n };
  } finally {
    await client.close();
  }
}

/**
 * Starts a worker with concurrency `concurrency` and a no-op handler on a backlog of `n`
 * jobs; the clock runs from just before start until every job is recorded as completed
 * (or `capS` seconds). Samples the completed count for start/end rates, and the longest
 * event-loop stall of the process (timers and I/O of the application wait that long).
 *
 * With `keyParallelism`, the system runs at most that many jobs of one key at once (for
 * a system that offers it: see the keyed drain workload).
 *
 * Sampling and the cap are also checked on each completion, not only by timers: a
 * worker that never yields to the event loop would otherwise starve them.
 */
export async function drain(system, ctx, { n, concurrency, keyParallelism, capS, sampleMs = 100 }) {
  let done = 0;
  let finish;
  const all = new Promise((r) => (finish = r));
  const timeline = [];
  let t0 = 0;
  let lastSample = -Infinity;
  const sample = () => {
    const t = performance.now() - t0;
    if (t - lastSample < sampleMs) return t;
    timeline.push([Math.round(t), done]);
    lastSample = t;
    return t;
  };
  const client = await system.open(ctx, {
    concurrency,
    keyParallelism,
    onDone: (k) => {
      done += k;
      const t = sample();
      if (done >= n) finish(false);
      else if (t > capS * 1000) finish(true);
    },
  });
  // A 10 ms timer: the longest gap between its ticks is the longest event-loop stall.
  let lastTick = performance.now();
  let maxGap = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - lastTick);
    lastTick = now;
  }, 10);
  t0 = performance.now();
  const cpu = process.cpuUsage();
  const sampler = setInterval(sample, sampleMs);
  const cap = setTimeout(() => finish(true), capS * 1000);
  await client.start();
  const capped = await all;
  clearTimeout(cap);
  if (!capped && client.settle) await client.settle();
  const seconds = (performance.now() - t0) / 1000;
  const cpuUs = cpuSince(cpu);
  clearInterval(sampler);
  clearInterval(ticker);
  maxGap = Math.max(maxGap, performance.now() - lastTick); // a gap still open at the end counts too
  const completed = capped ? done : n;
  timeline.push([Math.round(seconds * 1000), completed]);
  await closeWithin(client, 20_000);
  return {
    n,
    concurrency,
    seconds,
    completed,
    capped,
    rate: completed / seconds,
    cpuUsPerJob: cpuUs / completed,
    timeline,
    maxLoopStallMs: Math.max(0, maxGap - 10),
  };
}

/**
 * The system's own removal of finished jobs after a drain (its adapter's `cleanup`, if it
 * has one: see lib/life-cost.mjs). Returns what it reports, e.g. how many rows it deleted.
 */
export async function cleanup(system, ctx) {
  return system.cleanup ? await system.cleanup(ctx) : { deleted: 0 };
}

/**
 * Idle enqueue-to-start latency: with a started, idle worker, enqueues `n` jobs
 * `intervalMs` apart (on a fixed schedule, not waiting for the previous job) and records,
 * per job, the time from just before the enqueue call to the first line of its handler.
 */
export async function latency(system, ctx, { n, intervalMs, concurrency, waitMs = 10_000 }) {
  const sentAt = new Array(n);
  const lat = new Array(n);
  let got = 0;
  let finish;
  const all = new Promise((r) => (finish = r));
  const client = await system.open(ctx, {
    concurrency,
    onStart: (i) => {
      if (i < 0 || lat[i] !== undefined) return;
      lat[i] = performance.now() - sentAt[i];
      if (++got === n) finish();
    },
  });
  await client.start();
  for (let w = 0; w < 5; w++) {
    await client.enqueueOne({ i: -1 }); // warm up the enqueue and claim paths
    await sleep(20);
  }
  await sleep(500); // let the worker go idle
  const errors = [];
  const begin = performance.now();
  for (let i = 0; i < n; i++) {
    const wait = begin + i * intervalMs - performance.now();
    if (wait > 0) await sleep(wait);
    sentAt[i] = performance.now();
    client.enqueueOne({ i }).catch((e) => errors.push(e.message));
  }
  const timer = setTimeout(finish, waitMs);
  await all;
  clearTimeout(timer);
  await closeWithin(client, 20_000);
  if (errors.length) throw new Error(`${errors.length} enqueues failed: ${errors[0]}`);
  const values = lat.filter((v) => v !== undefined);
  return { n, received: values.length, ...percentiles(values) };
}

export function percentiles(values) {
  const s = [...values].sort((a, b) => a - b);
  const at = (p) => (s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : null);
  return { p50: at(50), p95: at(95), p99: at(99), max: s.length ? s[s.length - 1] : null };
}

async function closeWithin(client, ms) {
  let timer;
  await Promise.race([
    client.close(),
    new Promise((r) => (timer = setTimeout(() => r(console.error(`close took over ${ms} ms; leaving it`)), ms))),
  ]);
  clearTimeout(timer);
}
