#!/usr/bin/env node
// step.map at scale, on the built library (../dist): one run maps over N items (one action
// step each) with a started worker, then a second run is stopped mid-map (its journal about
// N / 2 entries) and a fresh pool and WorkflowManager on a new store connection carry it
// on: the first advance there replays the journal. Prints journal rows and bytes, heap used
// before / at peak / after, the run's wall time and this process's CPU, and the time of the
// replaying advance.
// Not part of the comparison; see notes/workflow-map.md.
//
//   node --expose-gc workflow-map.mjs [--store=sqlite|postgres] [--items=10000] [--concurrency=100]
//
// PostgreSQL: BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/workpool_bench), schema
// "bench_wf_map", dropped before each part.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, "").split("=")));
const storeKind = args.store ?? "sqlite";
const items = Number(args.items ?? 10_000);
const concurrency = Number(args.concurrency ?? 100);
const dist = new URL("../dist/", import.meta.url);
const require = createRequire(new URL("index.js", dist));
const { Workpool } = await import(new URL("index.js", dist).href);
const { WorkflowManager } = await import(new URL("workflow/index.js", dist).href);
const PG_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/workpool_bench";
const SCHEMA = "bench_wf_map";
const ADVANCE_FN = "workpool:workflow.advance";
const dir = mkdtempSync(join(tmpdir(), "workpool-wf-map-"));
const file = join(dir, "map.db");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const gc = () => globalThis.gc?.();
const mb = (bytes) => (bytes / 1024 / 1024).toFixed(1);

/** A new store on the bench's file or schema. */
async function openStore() {
  if (storeKind === "sqlite") {
    const { sqliteStore } = await import(new URL("drivers/sqlite/index.js", dist).href);
    return sqliteStore({ filename: file });
  }
  const { postgresStore } = await import(new URL("drivers/postgres/index.js", dist).href);
  return postgresStore({ connectionString: PG_URL, schema: SCHEMA });
}

/** Runs one SQL query with a connection of its own; returns its rows. */
async function query(sql) {
  if (storeKind === "sqlite") {
    const Database = require("better-sqlite3");
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare(sql).all();
    } finally {
      db.close();
    }
  }
  const pg = require("pg");
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

const table = (name) => (storeKind === "sqlite" ? `workpool_${name}` : `"${SCHEMA}".${name}`);

/** Starts from nothing: a new file, or the schema dropped. */
async function reset() {
  if (storeKind === "sqlite") {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
  } else {
    const pg = require("pg");
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
    await client.end();
  }
}

/** A pool and manager with the bench's workflow: a map of one action step per item. */
function open(store) {
  const pool = new Workpool(store, { name: "bench", maxParallelism: concurrency, logLevel: "ERROR" });
  const wf = new WorkflowManager(pool);
  const a = pool.defineAction("a", async (_ctx, i) => i + 1);
  const mapper = wf.define("mapper", async (step, { n, c }) => {
    const values = await step.map(
      Array.from({ length: n }, (_, i) => i),
      (i) => step.runAction(a, i),
      { concurrency: c },
    );
    return values.length;
  });
  return { pool, wf, mapper };
}

async function untilStatus(wf, id, test, limitMs = 600_000) {
  const deadline = performance.now() + limitMs;
  for (;;) {
    const s = await wf.status(id);
    if (test(s)) return s;
    if (performance.now() > deadline) throw new Error(`gave up after ${limitMs} ms: ${JSON.stringify(s)}`);
    await sleep(20);
  }
}

async function journal(id) {
  const [row] = await query(
    `SELECT count(*) AS rows, sum(coalesce(length(args), 0) + coalesce(length(outcome), 0)) AS bytes FROM ${table("workflow_steps")} WHERE run_id = '${id}'`,
  );
  const [run] = await query(`SELECT journal_bytes FROM ${table("workflow_runs")} WHERE id = '${id}'`);
  return { rows: Number(row.rows), bytes: Number(row.bytes), journalBytes: Number(run.journal_bytes) };
}

/** Part 1: one run maps over `items` items with a started worker. */
async function fullRun() {
  await reset();
  const store = await openStore();
  const { pool, wf, mapper } = open(store);
  await pool.runOnce(); // migrations and the pool's row, outside the measured region
  // Advances are the fallback when a step's completion cannot continue the run in memory.
  const advances = { n: 0, ms: 0 };
  pool.on("completed", (e) => {
    if (e.fnName !== ADVANCE_FN) return;
    advances.n++;
    advances.ms += e.durationMs;
  });
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  let heapPeak = heapBefore;
  const sampler = setInterval(() => (heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed)), 25);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  await pool.start();
  const id = await wf.start(mapper, { n: items, c: concurrency });
  const status = await untilStatus(wf, id, (s) => s.state !== "running");
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  clearInterval(sampler);
  if (status.state !== "success" || status.result !== items) throw new Error(`the run ended ${JSON.stringify(status)}`);
  await pool.stop({ timeoutMs: 10_000 });
  gc();
  const heapAfter = process.memoryUsage().heapUsed;
  const j = await journal(id);
  await store.close();
  return { ms, cpuMs, advances, heapBefore, heapPeak, heapAfter, ...j };
}

/** Part 2: a run stopped once its journal holds items / 2 entries; a fresh manager's first advance replays it. */
async function replayMidway() {
  await reset();
  const first = await openStore();
  const a = open(first);
  await a.pool.start();
  const id = await a.wf.start(a.mapper, { n: items, c: concurrency });
  await untilStatus(a.wf, id, (s) => s.steps >= items / 2 || s.state !== "running");
  // The "crash": this process's worker stops, its kept execution goes with it.
  await a.pool.stop({ timeoutMs: 10_000 });
  await first.close();
  const j = await journal(id);
  const store = await openStore();
  const b = open(store);
  const advances = [];
  b.pool.on("completed", (e) => {
    if (e.fnName === ADVANCE_FN) advances.push(e.durationMs);
  });
  // Step the fresh pool until its first advance ran: the items left in flight end first, then the advance replays.
  while (!advances.length) await b.pool.runOnce();
  const replayMs = advances[0];
  await b.pool.start();
  const status = await untilStatus(b.wf, id, (s) => s.state !== "running");
  await b.pool.stop({ timeoutMs: 10_000 });
  await store.close();
  if (status.state !== "success" || status.result !== items) throw new Error(`the replayed run ended ${JSON.stringify(status)}`);
  return { entries: j.rows, replayMs };
}

try {
  if (!globalThis.gc) console.log("(run with node --expose-gc for heap figures after a forced GC)");
  const f = await fullRun();
  console.log(
    `${storeKind}: map of ${items} items, concurrency ${concurrency}: ${(f.ms / 1000).toFixed(2)} s (${Math.round(items / (f.ms / 1000))} items/s)`,
  );
  console.log(`  CPU of this process: ${(f.cpuMs / 1000).toFixed(2)} s, ${Math.round((f.cpuMs * 1000) / items)} µs per item`);
  console.log(`  advances (not continued in memory): ${f.advances.n}, ${Math.round(f.advances.ms)} ms in all`);
  console.log(`  journal: ${f.rows} rows, ${f.bytes} bytes of args and outcomes (journal_bytes ${f.journalBytes})`);
  console.log(`  heap used: ${mb(f.heapBefore)} MB before, ${mb(f.heapPeak)} MB peak, ${mb(f.heapAfter)} MB after (MB = 2^20 bytes)`);
  const r = await replayMidway();
  console.log(`  replay: a fresh manager's advance of the run stopped at ${r.entries} entries took ${r.replayMs.toFixed(0)} ms`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
