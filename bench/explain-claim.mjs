#!/usr/bin/env node
// The claim under a per-key limit with a hot key's backlog: 100,000 pending rows of one
// key (keyParallelism 1, so all but one wait) ahead of 1,000 rows of 100 other keys and
// 1,000 rows without a key. Prints how long successive claims take on each store, and the
// plans of the statements inside them: auto_explain on PostgreSQL (the claim is a PL/pgSQL
// function, so its inner statements are what an EXPLAIN ANALYZE of the call hides), and
// EXPLAIN QUERY PLAN on SQLite. See notes/priorities-keys.md.
//
//   node explain-claim.mjs [--store=postgres|sqlite] [--hot=100000]
//
// Needs `npm run build` at the repository root. PostgreSQL: BENCH_PG_URL as for the bench
// (the session loads auto_explain, so the role must be allowed to: a superuser).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { PG_URL } from "./lib/env.mjs";
import { dropSchema, ensureDatabase } from "./lib/pg.mjs";

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, "").split("=")));
const HOT = Number(args.hot ?? 100_000);
const dist = new URL("../dist/", import.meta.url);
const { DRIVER } = await import(new URL("driver/driver.js", dist).href);
const { newWorkId } = await import(new URL("ids.js", dist).href);

const POOL = "explain";
const T0 = Date.UTC(2030, 0, 1);

function row(i, key, runAt, pool = POOL) {
  return {
    id: newWorkId(T0),
    pool,
    kind: "action",
    fnName: "job",
    name: null,
    args: `{"i":${i}}`,
    runAt,
    enqueuedAt: T0,
    retry: null,
    timeoutMs: null,
    onComplete: null,
    context: null,
    priority: 0,
    key,
    uniqueKey: null,
    onConflict: "keep",
  };
}

/** Fills the pool: the hot key's backlog first in claim order, then the other keys and the unkeyed rows. */
async function fill(driver) {
  await driver.ensurePool(POOL, { maxParallelism: 100, logLevel: "ERROR", keyParallelism: 1 }, {});
  const rows = [];
  for (let i = 0; i < HOT; i++) rows.push(row(i, "hot", T0 - 2 * HOT + i));
  for (let i = 0; i < 1000; i++) rows.push(row(i, `k${i % 100}`, T0 - HOT + i));
  for (let i = 0; i < 1000; i++) rows.push(row(i, null, T0 - HOT + 1000 + i));
  for (let i = 0; i < rows.length; i += 10_000) await driver.insertWork(rows.slice(i, i + 10_000));
}

/** For comparison: a pool without keys or a per-key limit, 2,000 due rows. */
async function fillPlain(driver) {
  await driver.ensurePool("plain", { maxParallelism: 100, logLevel: "ERROR", keyParallelism: null }, {});
  await driver.insertWork(Array.from({ length: 2000 }, (_, i) => row(i, null, T0 - 3000 + i, "plain")));
}

/** Runs `n` claims of up to 100 rows, finishing what each took except the hot key's first attempt. */
async function claims(driver, n, label, pool = POOL) {
  for (let c = 1; c <= n; c++) {
    const t = performance.now();
    const res = await driver.claim(pool, { workerId: "w", now: T0, leaseUntil: T0 + 60_000, limit: 100 });
    const ms = performance.now() - t;
    const hot = res.claimed.filter((r) => r.key === "hot").length;
    console.log(`${label} claim ${c}: ${ms.toFixed(1)} ms, ${res.claimed.length} rows (${hot} of the hot key)`);
    const done = res.claimed.filter((r) => r.key !== "hot");
    await driver.transaction((ops) =>
      ops.finish(done.map((r) => ({ id: r.id, result: '{"kind":"success"}', finishedAt: T0, ocState: "none" }))),
    );
  }
}

async function postgres() {
  await ensureDatabase();
  const schema = "explain_claim";
  await dropSchema(schema);
  const { postgresStore } = await import(new URL("drivers/postgres/index.js", dist).href);
  const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
  const store = postgresStore({ pool, schema, vacuum: false });
  const driver = store[DRIVER];
  await driver.migrate();
  await fill(driver);
  await fillPlain(driver);
  await pool.query(`VACUUM ANALYZE "${schema}".work`);
  await claims(driver, 3, "postgres, for comparison a pool without keys", "plain");
  await claims(driver, 1, "postgres (walks the hot backlog once and parks it)");
  await claims(driver, 2, "postgres, before a vacuum (the parked rows' dead index entries are walked)");
  // What the maintenance leader's vacuum does once 10,000 dead rows piled up (the store's default).
  await pool.query(`VACUUM "${schema}".work`);
  await claims(driver, 3, "postgres, after the vacuum");
  const c = await pool.connect();
  c.on("notice", (m) => console.log(m.message.replace(/\n/g, "\n    ")));
  await c.query("LOAD 'auto_explain'");
  await c.query("SET client_min_messages = log");
  await c.query(
    "SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on; SET auto_explain.log_nested_statements = on; SET auto_explain.log_buffers = on",
  );
  console.log("\n--- plans of the statements of one claim (auto_explain) ---");
  const t = performance.now();
  await c.query(`SELECT * FROM "${schema}".claim($1, 'w', $2, $3, 100, NULL, NULL, NULL)`, [POOL, T0, T0 + 60_000]);
  console.log(`(that claim, with plans logged: ${(performance.now() - t).toFixed(1)} ms)`);
  await c.query("RESET auto_explain.log_min_duration");
  console.log("\n--- without parking: the same walk over an index of every pending row, skipping the hot key by a filter ---");
  await c.query(`CREATE INDEX explain_all_pending ON "${schema}".work (pool, priority, run_at, id) WHERE state = 'pending'`);
  await c.query("SET enable_seqscan = off; SET enable_sort = off; SET enable_bitmapscan = off");
  const { rows } = await c.query(
    `EXPLAIN (ANALYZE, BUFFERS) SELECT w.id FROM "${schema}".work w
     WHERE w.pool = $1 AND w.state = 'pending' AND w.priority = 0 AND w.run_at <= $2 AND w.key IS DISTINCT FROM 'hot'
     ORDER BY w.run_at, w.id LIMIT 100`,
    [POOL, T0],
  );
  for (const r of rows) console.log(`    ${r["QUERY PLAN"]}`);
  c.release();
  await store.close();
  await pool.end();
  await dropSchema(schema);
}

async function sqlite() {
  const dir = mkdtempSync(join(tmpdir(), "explain-claim-"));
  try {
    const { sqliteStore } = await import(new URL("drivers/sqlite/index.js", dist).href);
    const store = sqliteStore({ filename: join(dir, "explain.db") });
    const driver = store[DRIVER];
    await fill(driver);
    await fillPlain(driver);
    store.db.exec("ANALYZE");
    await claims(driver, 3, "sqlite, for comparison a pool without keys", "plain");
    await claims(driver, 1, "sqlite (walks the hot backlog once and parks it)");
    await claims(driver, 3, "sqlite");
    const plan = (sql, ...params) => {
      console.log(`\n${sql.replace(/\s+/g, " ").trim()}`);
      for (const r of store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params)) console.log(`    ${r.detail}`);
    };
    plan(
      "SELECT id, key FROM workpool_work WHERE pool = ? AND state = 'pending' AND parked = 0 AND priority = ? AND run_at <= ? ORDER BY run_at, id",
      POOL,
      0,
      T0,
    );
    plan("SELECT key, count(*) AS n FROM workpool_work WHERE pool = ? AND state = 'running' AND key IS NOT NULL GROUP BY key", POOL);
    plan(
      "SELECT id FROM workpool_work WHERE pool = ? AND key = ? AND state = 'pending' AND parked = 1 ORDER BY priority, run_at, id LIMIT 1",
      POOL,
      "hot",
    );
    plan(
      "SELECT priority FROM workpool_work WHERE pool = ? AND state = 'pending' AND parked = 0 AND priority > ? ORDER BY priority LIMIT 1",
      POOL,
      0,
    );
    // Without parking: the walk over an index of every pending row, skipping the hot key by a filter.
    store.db.exec("CREATE INDEX explain_all_pending ON workpool_work (pool, priority, run_at) WHERE state = 'pending'");
    const walk = `SELECT id FROM workpool_work INDEXED BY explain_all_pending
      WHERE pool = ? AND state = 'pending' AND priority = 0 AND run_at <= ? AND key IS NOT 'hot' ORDER BY run_at, id LIMIT 100`;
    plan(walk, POOL, T0);
    const t = performance.now();
    const n = store.db.prepare(walk).all(POOL, T0).length;
    console.log(`    ${n} rows in ${(performance.now() - t).toFixed(1)} ms (the walk alone, without parking)`);
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if ((args.store ?? "postgres") === "postgres") await postgres();
else await sqlite();
