#!/usr/bin/env node
// Where workpool's server CPU and WAL go in a drain on PostgreSQL: the life of `--jobs` jobs
// (fill in batches of 10,000, drain at `--concurrency`, retention, VACUUM) in one process,
// and per phase:
//
// - the server CPU of the database's backends (lib/server-cost.mjs);
// - the WAL records of the database by kind and relation (pg_waldump): records and bytes
//   per job, so each index's entries per job and what each statement's rows write;
// - with --plans: every statement the server ran, top-level calls and the statements inside
//   claim() and complete(), from auto_explain (ANALYZE, BUFFERS, WAL; timing off) sent to
//   the client: calls, time and WAL per job. auto_explain slows the server, so the CPU
//   figures of a --plans run are not the drain's.
//
//   node bench/server-profile.mjs [--jobs=5000] [--concurrency=10] [--plans] [--fillfactor=N]
//
// --fillfactor sets the work table's fillfactor before the fill (an experiment: the
// library's schema leaves it at 100).
//
// Needs `npm run build` at the repository root and the server on this machine (it reads
// /proc and pg_wal), as a superuser. Uses BENCH_PG_URL like the bench: give it a database of
// its own (its figures count that database only). Results: notes/server-cost.md.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import pg from "pg";
import { PG_URL } from "./lib/env.mjs";
import { dropSchema, ensureDatabase } from "./lib/pg.mjs";
import { findWaldump, openServerCost } from "./lib/server-cost.mjs";

const args = Object.fromEntries(process.argv.slice(2).map((a) => [a.replace(/^--/, "").split("=")[0], a.split("=")[1] ?? "true"]));
const JOBS = Number(args.jobs ?? 5000);
const CONCURRENCY = Number(args.concurrency ?? 10);
const PLANS = args.plans === "true";
const FILLFACTOR = args.fillfactor ? Number(args.fillfactor) : null;
const SCHEMA = "server_profile";
const dist = new URL("../dist/", import.meta.url);

await ensureDatabase();
await dropSchema(SCHEMA);
const probe = new pg.Client({ connectionString: PG_URL });
await probe.connect();
const one = async (sql, params) => (await probe.query(sql, params)).rows[0];
const { oid: dbOid } = await one("SELECT oid::text AS oid FROM pg_database WHERE datname = current_database()");
const { dir } = await one("SELECT current_setting('data_directory') AS dir");
const waldump = findWaldump();
if (!waldump) throw new Error("pg_waldump not found");

// Statements seen by auto_explain (with --plans): text → { calls, ms, walBytes, walRecords, hit, dirtied }.
const statements = new Map();
function onNotice(msg) {
  const text = msg.message ?? "";
  const d = /duration: ([\d.]+) ms/.exec(text);
  const q = /Query Text: ([\s\S]*?)\n(?=\S)/.exec(text + "\n");
  if (!d || !q) return;
  const key = q[1].replace(/\s+/g, " ").trim().slice(0, 110);
  const wal = /WAL: (?:records=(\d+))?\s*(?:fpi=(\d+))?\s*(?:bytes=(\d+))?/.exec(text);
  const buf = /Buffers: shared(?: hit=(\d+))?(?: read=(\d+))?(?: dirtied=(\d+))?/.exec(text);
  const s = statements.get(key) ?? { calls: 0, ms: 0, walBytes: 0, walRecords: 0, hit: 0, dirtied: 0 };
  s.calls++;
  s.ms += Number(d[1]);
  s.walRecords += Number(wal?.[1] ?? 0);
  s.walBytes += Number(wal?.[3] ?? 0);
  s.hit += Number(buf?.[1] ?? 0);
  s.dirtied += Number(buf?.[3] ?? 0);
  s.plan = text; // the last one, printed for the costliest statements
  statements.set(key, s);
}

const pool = new pg.Pool({ connectionString: PG_URL, max: 10 });
pool.on("connect", (client) => {
  if (!PLANS) return;
  client.on("notice", onNotice);
  client.query(
    "LOAD 'auto_explain'; SET log_min_messages = fatal; SET client_min_messages = log; " +
      "SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on; SET auto_explain.log_timing = off; " +
      "SET auto_explain.log_buffers = on; SET auto_explain.log_wal = on; SET auto_explain.log_nested_statements = on",
  );
});
const { Workpool } = await import(new URL("index.js", dist).href);
const { postgresStore } = await import(new URL("drivers/postgres/index.js", dist).href);
const store = postgresStore({ pool, schema: SCHEMA });
await store.migrate();
if (FILLFACTOR) await probe.query(`ALTER TABLE "${SCHEMA}".work SET (fillfactor = ${FILLFACTOR})`);

const meter = await openServerCost();
const phases = [];

/** Runs fn as one phase: server CPU, and the WAL records of this database by kind and relation. */
async function phase(name, fn) {
  statements.clear();
  await one("SELECT pg_create_physical_replication_slot('server_profile', true, true)");
  const start = (await one("SELECT pg_current_wal_insert_lsn()::text AS l")).l;
  const m = await meter.measure(fn);
  const end = (await one("SELECT pg_current_wal_insert_lsn()::text AS l")).l;
  const records = await walRecords(start, end);
  await one("SELECT pg_drop_replication_slot('server_profile')");
  phases.push({ name, cpuUs: m.cpuUs?.db ?? null, records, statements: new Map(statements) });
}

/** pg_waldump's records of this database from start to end: "rmgr KIND relation" → { n, bytes, fpi }. */
async function walRecords(start, end) {
  const names = new Map(
    (await probe.query("SELECT relfilenode::text AS f, relname FROM pg_class WHERE relfilenode <> 0")).rows.map((r) => [r.f, r.relname]),
  );
  const out = new Map();
  const byTx = new Map();
  const mineTx = new Set();
  const child = spawn(waldump, ["-p", `${dir}/pg_wal`, "-s", start, "-e", end], { stdio: ["ignore", "pipe", "inherit"] });
  const re = /^rmgr: (\S+)\s+len \(rec\/tot\):\s*(\d+)\/\s*(\d+), tx:\s*(\d+), .*?desc: (\S+)/;
  for await (const line of createInterface({ input: child.stdout })) {
    const m = re.exec(line);
    if (!m) continue;
    const [, rmgr, rec, tot, tx, kind] = m;
    const rel = / rel \d+\/(\d+)\/(\d+)/.exec(line);
    const add = (k) => {
      const e = out.get(k) ?? { n: 0, bytes: 0, fpi: 0 };
      e.n++;
      e.bytes += Math.ceil(Number(tot) / 8) * 8;
      e.fpi += Number(tot) - Number(rec);
      out.set(k, e);
    };
    if (rel) {
      if (rel[1] !== dbOid) continue;
      if (tx !== "0") mineTx.add(tx);
      add(`${rmgr} ${kind} ${names.get(rel[2]) ?? rel[2]}`);
    } else if (tx !== "0") (byTx.get(tx) ?? byTx.set(tx, []).get(tx)).push(() => add(`${rmgr} ${kind}`));
  }
  for (const [tx, adds] of byTx) if (mineTx.has(tx)) for (const a of adds) a();
  return out;
}

const wp = new Workpool(store, { name: "profile", maxParallelism: CONCURRENCY, logLevel: "ERROR" });
let done = 0;
let all;
const finished = new Promise((r) => (all = r));
const noop = wp.defineAction("noop", async () => {});
wp.on("completed", () => {
  if (++done === JOBS) all();
});
await phase("fill", async () => {
  for (let i = 0; i < JOBS; i += 10_000)
    await wp.enqueueActionBatch(
      noop,
      Array.from({ length: Math.min(10_000, JOBS - i) }, (_, k) => ({ i: i + k })),
    );
});
await phase("drain", async () => {
  await wp.start();
  await finished;
  await wp.stop();
});
await phase("cleanup", async () => {
  const ret = new Workpool(store, { name: "profile", retentionMs: 0, logLevel: "ERROR" });
  ret.defineAction("noop", async () => {});
  while ((await ret.runOnce()).deleted > 0);
});
await phase("vacuum", () => probe.query(`VACUUM "${SCHEMA}".work`));

const per = (v) => (v / JOBS).toFixed(v / JOBS >= 10 ? 0 : 2);
console.log(
  `workpool PostgreSQL, ${JOBS} jobs, concurrency ${CONCURRENCY}${PLANS ? ", auto_explain on" : ""}${FILLFACTOR ? `, fillfactor ${FILLFACTOR}` : ""}\n`,
);
for (const p of phases) {
  const rows = [...p.records].sort((a, b) => b[1].bytes - a[1].bytes);
  const total = rows.reduce((a, [, e]) => a + e.bytes, 0);
  console.log(`## ${p.name}: server CPU ${p.cpuUs === null ? "n/a" : per(p.cpuUs)} µs/job, WAL ${per(total)} B/job`);
  console.log("records/job  bytes/job  fpi B/job  record (rmgr kind relation)");
  for (const [k, e] of rows) {
    if (e.bytes / JOBS < 0.5) continue;
    console.log(`${per(e.n).padStart(11)}  ${per(e.bytes).padStart(9)}  ${per(e.fpi).padStart(9)}  ${k}`);
  }
  if (PLANS) {
    console.log("\ncalls/job  ms/1000 jobs  WAL B/job  WAL rec/job  dirtied/job  statement");
    for (const [k, s] of [...p.statements].sort((a, b) => b[1].ms - a[1].ms)) {
      if (s.ms / JOBS < 0.0005 && s.walBytes === 0) continue;
      console.log(
        `${per(s.calls).padStart(9)}  ${((s.ms * 1000) / JOBS).toFixed(1).padStart(12)}  ${per(s.walBytes).padStart(9)}  ${per(s.walRecords).padStart(11)}  ${per(s.dirtied).padStart(11)}  ${k}`,
      );
    }
    console.log("\nplans of the statements writing the most WAL (the last call of each):");
    for (const [, s] of [...p.statements].sort((a, b) => b[1].walBytes - a[1].walBytes).slice(0, 4)) {
      console.log(`\n    ${s.plan.replace(/\n/g, "\n    ")}`);
    }
  }
  console.log("");
}
await meter.close();
await store.close();
await pool.end();
await probe.end();
await dropSchema(SCHEMA);
