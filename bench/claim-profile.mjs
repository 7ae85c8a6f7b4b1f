#!/usr/bin/env node
// Drains on PostgreSQL alternated between claim designs, in one process: for each design a
// schema is migrated with the built library, then the SQL files of bench/claim-variants/<design>/
// are applied over it ("base": none; "a~b": those of a, then those of b), and the designs drain
// the same backlog in turn (A B C, C B A, …). Per drain: jobs/s, CPU of the server's backends per
// job (from /proc, every backend of the drain's connections: the server must run on this
// machine), CPU of this process per job, and WAL bytes per job (the server's WAL position: it
// counts every database's writes, so run it on a quiet server). With --keys=K the backlog is
// spread over K keys at keyParallelism 1, priorities -5/0/5. See notes/postgres-claim.md.
//
//   node claim-profile.mjs --designs=before,base,slots [--n=20000] [--c=10] [--keys=0] [--pairs=4] [--checkpoint=0]
//
// Needs `npm run build` at the repository root and BENCH_PG_URL as for the bench.
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { PG_URL } from "./lib/env.mjs";
import { dropSchema, ensureDatabase, withClient } from "./lib/pg.mjs";

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, "").split("=")));
const DESIGNS = (args.designs ?? "base").split(",");
const N = Number(args.n ?? 20_000);
const C = Number(args.c ?? 10);
const KEYS = Number(args.keys ?? 0);
const PAIRS = Number(args.pairs ?? 4);
const CHECKPOINT = args.checkpoint !== "0";
const dist = new URL("../dist/", import.meta.url);
const { Workpool } = await import(new URL("index.js", dist).href);
const { postgresStore } = await import(new URL("drivers/postgres/index.js", dist).href);

const TICK_US = 10_000; // /proc times are in clock ticks of 10 ms

/** utime + stime of a process in µs, or null once it is gone. */
function procCpuUs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) * TICK_US;
  } catch {
    return null;
  }
}

/** The schema's SQL files of a design, applied over the migrated schema. */
async function applyDesign(schema, design) {
  // "a~b": the files of variant a, then those of b.
  for (const variant of design.split("~")) {
    const dir = new URL(`claim-variants/${variant}/`, import.meta.url);
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)
      .filter((f) => f.endsWith(".sql"))
      .sort()) {
      const sql = readFileSync(new URL(f, dir), "utf8").split(':"schema"').join(`"${schema}"`);
      await withClient((c) => c.query(sql));
    }
  }
}

async function backendPids(app) {
  return withClient(async (c) =>
    (await c.query("SELECT pid FROM pg_stat_activity WHERE application_name = $1", [app])).rows.map((r) => r.pid),
  );
}

async function walLsn() {
  return withClient(async (c) => BigInt((await c.query("SELECT pg_current_wal_lsn() - '0/0' AS b")).rows[0].b));
}

async function drainOnce(design, rep) {
  const schema = `claimprof_${design.replace(/\W/g, "_")}`;
  const app = `claimprof_${design.replace(/\W/g, "_")}_${rep}`;
  await dropSchema(schema);
  const url = new URL(PG_URL);
  url.searchParams.set("application_name", app);
  const store = postgresStore({ connectionString: url.toString(), schema });
  await store.migrate();
  await applyDesign(schema, design);
  const opts = { name: "bench", maxParallelism: C, logLevel: "ERROR", ...(KEYS ? { keyParallelism: 1 } : {}) };
  const filler = new Workpool(store, opts);
  const noop = filler.defineAction("noop", () => undefined);
  for (let i = 0; i < N; i += 10_000) {
    const n = Math.min(10_000, N - i);
    if (KEYS) {
      for (let k = 0; k < KEYS; k++) {
        const part = Array.from({ length: Math.ceil(n / KEYS) }, (_, j) => ({ i: i + j }));
        await filler.enqueueActionBatch(noop, part, { key: `k${k}`, priority: (k % 3) * 5 - 5 });
      }
    } else
      await filler.enqueueActionBatch(
        noop,
        Array.from({ length: n }, (_, j) => ({ i: i + j })),
      );
  }
  // --checkpoint=0: drain at once after the fill, as the bench does.
  if (CHECKPOINT) await withClient((c) => c.query("CHECKPOINT"));
  const total = KEYS ? Math.ceil(Math.min(10_000, N) / KEYS) * KEYS * Math.ceil(N / 10_000) : N;
  const pool = new Workpool(store, opts);
  pool.defineAction("noop", () => undefined);
  let done = 0;
  let finish;
  const finished = new Promise((r) => (finish = r));
  pool.on("completed", () => {
    if (++done === total) finish();
  });
  const pidsBefore = await backendPids(app);
  const cpuBefore = new Map(pidsBefore.map((p) => [p, procCpuUs(p)]));
  const wal0 = await walLsn();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await pool.start();
  // Track every backend of the drain: its last reading counts, also once it is gone.
  const last = new Map();
  const sample = async () => {
    for (const p of await backendPids(app)) last.set(p, procCpuUs(p) ?? last.get(p));
  };
  const sampler = setInterval(() => void sample(), 200);
  console.error(`draining ${app}`);
  await finished;
  await sample();
  clearInterval(sampler);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const wal = Number((await walLsn()) - wal0);
  await pool.stop({ timeoutMs: 10_000 });
  await store.close();
  let serverUs = 0;
  for (const [p, v] of last) serverUs += (v ?? 0) - (cpuBefore.get(p) ?? 0);
  return {
    design,
    rate: total / seconds,
    serverUsPerJob: serverUs / total,
    workerUsPerJob: (cpu.user + cpu.system) / total,
    walPerJob: wal / total,
  };
}

await ensureDatabase();
const results = Object.fromEntries(DESIGNS.map((d) => [d, []]));
for (let rep = 0; rep < PAIRS; rep++) {
  for (const d of rep % 2 ? [...DESIGNS].reverse() : DESIGNS) {
    const r = await drainOnce(d, rep);
    results[d].push(r);
    console.log(
      `${d.padEnd(12)} ${Math.round(r.rate).toString().padStart(6)} jobs/s  server ${r.serverUsPerJob.toFixed(0).padStart(4)} µs/job  worker ${r.workerUsPerJob.toFixed(0).padStart(4)} µs/job  WAL ${r.walPerJob.toFixed(0).padStart(5)} B/job`,
    );
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const d of DESIGNS) {
  const rs = results[d];
  console.log(
    `median ${d}: ${Math.round(median(rs.map((r) => r.rate)))} jobs/s, server ${median(rs.map((r) => r.serverUsPerJob)).toFixed(0)} µs/job, worker ${median(rs.map((r) => r.workerUsPerJob)).toFixed(0)} µs/job, WAL ${median(rs.map((r) => r.walPerJob)).toFixed(0)} B/job`,
  );
}
for (const d of DESIGNS.slice(1)) {
  const ratios = results[d].map((r, i) => r.rate / results[DESIGNS[0]][i].rate);
  console.log(`${d} / ${DESIGNS[0]}: median rate ratio ${median(ratios).toFixed(2)} (${ratios.map((x) => x.toFixed(2)).join(", ")})`);
}
for (const d of DESIGNS) await dropSchema(`claimprof_${d.replace(/\W/g, "_")}`);
