// The admin API's reads on a large table: the plan and time of admin.list() with each
// filter, and of admin.pools(), on both stores. Fills a work table of 200,000 rows (two
// pools: "big" with 195,000 and "small" with 5,000, interleaved), then runs each query's
// SQL, as the drivers build it, under EXPLAIN. Results: notes/admin-queries.md.
//
//   npm run build && node bench/admin-queries.mjs [--rows=200000] [--store=sqlite,postgres]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import Database from "better-sqlite3";
import pg from "pg";
import { PG_URL } from "./lib/env.mjs";
import { ensureDatabase } from "./lib/pg.mjs";

const dist = new URL("../dist/", import.meta.url);
const { newWorkId } = await import(new URL("ids.js", dist).href);
const { sqliteStore } = await import(new URL("drivers/sqlite/index.js", dist).href);
const { SqliteAdmin } = await import(new URL("drivers/sqlite/admin.js", dist).href);
const { postgresStore } = await import(new URL("drivers/postgres/index.js", dist).href);
const { PgAdmin } = await import(new URL("drivers/postgres/admin.js", dist).href);

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, "").split("=")));
const ROWS = Number(args.rows ?? 200_000);
const STORES = (args.store ?? "sqlite,postgres").split(",");
const NOW = Date.UTC(2030, 0, 1);

/** Deterministic pseudo-random numbers (mulberry32), so both stores get the same table. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The rows, oldest first, one a second apart: the oldest 77.5 % finished (2 % of those
 * failed, 0.5 % canceled), then 17.5 % pending (due), 1 % retrying, 100 running, the
 * rest pending; one handler in 2,000 is "rare".
 */
function* rows() {
  const rnd = random(7);
  for (let i = 0; i < ROWS; i++) {
    const t = NOW - (ROWS - i) * 1000;
    const pool = i % 40 === 0 ? "small" : "big";
    const fn = i % 2000 === 7 ? "rare" : `handler${i % 10}`;
    const row = { id: newWorkId(t), pool, fn, name: `job-${i}`, t, state: "pending", attempt: 0, result: null, log: null, runAt: t };
    const share = i / ROWS;
    const r = rnd();
    if (share < 0.775) {
      row.state = "finished";
      row.attempt = 1;
      if (r < 0.02) {
        row.result = '{"kind":"failed","error":"boom"}';
        row.log = JSON.stringify([
          { attempt: 1, startedAt: t, endedAt: t + 5, outcome: "failed", error: { message: "boom", name: "Error" } },
        ]);
      } else if (r < 0.025) row.result = '{"kind":"canceled"}';
      else row.result = '{"kind":"success","returnValue":1}';
    } else if (r < 0.01) {
      row.attempt = 1;
      row.runAt = NOW + 60_000;
    } else if (i >= ROWS - 100) {
      row.state = "running";
      row.attempt = 1;
    }
    yield row;
  }
}

/** The queries: a label and the driver's listing query (null: pools()). */
function queries(cursor) {
  const q = (state, extra = {}) => ({ state, fnName: null, id: null, prefix: null, key: null, beforeId: null, limit: 51, ...extra });
  return [
    ["pools()", null, null],
    ["list big, no filter", "big", q(null)],
    ["list big, no filter, page in the middle", "big", q(null, { beforeId: cursor })],
    ["list big, pending", "big", q("pending")],
    ["list big, retrying", "big", q("retrying")],
    ["list big, running", "big", q("running")],
    ["list big, finished", "big", q("finished")],
    ["list big, success", "big", q("success")],
    ["list big, failed", "big", q("failed")],
    ["list big, canceled", "big", q("canceled")],
    ["list big, handler (1 in 10)", "big", q(null, { fnName: "handler3" })],
    ["list big, handler (rare)", "big", q(null, { fnName: "rare" })],
    ["list big, failed + handler (rare)", "big", q("failed", { fnName: "rare" })],
    ["list big, search by id", "big", q(null, { id: cursor })],
    ["list big, search by prefix (rare)", "big", q(null, { prefix: "rar" })],
    ["list small, no filter", "small", q(null)],
    ["list small, pending", "small", q("pending")],
    ["list small, failed", "small", q("failed")],
  ];
}

/** Milliseconds of the fastest of 5 runs of `fn`. */
function best(fn) {
  let min = Infinity;
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    fn();
    min = Math.min(min, performance.now() - t);
  }
  return min;
}

async function bestAsync(fn) {
  let min = Infinity;
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    await fn();
    min = Math.min(min, performance.now() - t);
  }
  return min;
}

async function sqlite() {
  const dir = mkdtempSync(join(tmpdir(), "workpool-admin-queries-"));
  const store = sqliteStore({ filename: join(dir, "q.db"), synchronous: "NORMAL" });
  const db = store.db;
  const insert = db.prepare(`INSERT INTO workpool_work (id, pool, kind, fn_name, name, args, state, run_at, enqueued_at, attempt,
    started_at, result, finished_at, attempt_log) VALUES (?, ?, 'action', ?, ?, '{}', ?, ?, ?, ?, ?, ?, ?, ?)`);
  db.transaction(() => {
    for (const r of rows()) {
      insert.run(
        r.id,
        r.pool,
        r.fn,
        r.name,
        r.state,
        r.runAt,
        r.t,
        r.attempt,
        r.attempt ? r.t : null,
        r.result,
        r.result ? r.t + 5 : null,
        r.log,
      );
    }
  })();
  db.exec("ANALYZE");
  // The statements as the driver builds them, caught as they are prepared and run.
  const seen = [];
  const raw = new Database(join(dir, "q.db"));
  const spy = new Proxy(raw, {
    get(target, key) {
      if (key !== "prepare") return Reflect.get(target, key).bind?.(target) ?? Reflect.get(target, key);
      return (sql) => {
        const stmt = target.prepare(sql);
        return { all: (p) => (seen.push({ sql, p }), stmt.all(p)), get: (p) => stmt.get(p), run: (...p) => stmt.run(...p) };
      };
    },
  });
  // Each read run at once rather than under the store's lock, so it can be timed as a synchronous call.
  const admin = new SqliteAdmin(spy, { read: (fn) => fn() }, null);
  const cursor = rowsAt(raw, ROWS / 2);
  const out = [];
  for (const [label, pool, query] of queries(cursor)) {
    seen.length = 0;
    const run = () => (pool === null ? admin.readPools(NOW, NOW - 60_000) : admin.listWork(pool, query));
    const n = run().length;
    const { sql, p } = seen[0];
    const plan = raw
      .prepare(`EXPLAIN QUERY PLAN ${sql}`)
      .all(p)
      .map((r) => r.detail)
      .join("; ");
    out.push({ label, rows: n, ms: best(run), plan });
  }
  raw.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return out;
}

/** The id of the row at position `i` (oldest first). */
function rowsAt(db, i) {
  return db.prepare("SELECT id FROM workpool_work WHERE pool = 'big' ORDER BY id LIMIT 1 OFFSET ?").get(Math.floor(i)).id;
}

async function postgres() {
  await ensureDatabase();
  const schema = `admin_queries_${process.pid}`;
  const store = postgresStore({ connectionString: PG_URL, schema, vacuum: false });
  await store.migrate();
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const batch = [];
    const flush = async () => {
      const cols = ["id", "pool", "fn", "name", "state", "runAt", "t", "attempt", "started", "result", "finished", "log"];
      const arrays = cols.map((c) => batch.map((r) => r[c]));
      await client.query(
        `INSERT INTO "${schema}".work (id, pool, kind, fn_name, name, args, state, run_at, enqueued_at, attempt, started_at, result, finished_at, attempt_log)
         SELECT a, b, 'action', c, d, '{}', e, f, g, h, i, j, k, l::jsonb FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
           $6::bigint[], $7::bigint[], $8::int[], $9::bigint[], $10::text[], $11::bigint[], $12::text[]) AS u(a, b, c, d, e, f, g, h, i, j, k, l)`,
        arrays,
      );
      batch.length = 0;
    };
    for (const r of rows()) {
      batch.push({ ...r, started: r.attempt ? r.t : null, finished: r.result ? r.t + 5 : null });
      if (batch.length === 10_000) await flush();
    }
    if (batch.length) await flush();
    await client.query(`VACUUM ANALYZE "${schema}".work`);
    const cursor = (await client.query(`SELECT id FROM "${schema}".work WHERE pool = 'big' ORDER BY id LIMIT 1 OFFSET $1`, [ROWS / 2]))
      .rows[0].id;
    // The statements as the driver builds them, caught by a stand-in connection, then run for
    // real, with JIT compilation off as the driver runs pools() (see the notes).
    await client.query("SET jit = off");
    // Where the admin's statements run: the stand-in connection of each query.
    const conn = { app: null, pool: null };
    const admin = new PgAdmin(schema, "unused", conn);
    const out = [];
    for (const [label, pool, query] of queries(cursor)) {
      let caught;
      const spy = {
        query: async (c) => ((caught = typeof c === "string" ? caught : c), { rows: [], rowCount: 0 }),
        on() {},
        off() {},
        release() {},
      };
      conn.app = spy;
      conn.pool = { connect: async () => spy };
      if (pool === null) await admin.readPools(NOW, NOW - 60_000);
      else await admin.listWork(pool, query);
      const runOnce = () => client.query({ text: caught.text, values: caught.values });
      const n = (await runOnce()).rowCount;
      const explain = await client.query({ text: `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${caught.text}`, values: caught.values });
      const lines = explain.rows.map((r) => r["QUERY PLAN"]);
      const plan = lines
        .filter((l) => /Scan|Sort|Limit|Aggregate|Append|Unique/.test(l))
        .map((l) =>
          l
            .trim()
            .replace(/^->\s*/, "")
            .replace(/\s+\(actual.*$/, ""),
        )
        .slice(0, 6)
        .join("; ");
      out.push({ label, rows: n, ms: await bestAsync(runOnce), plan });
    }
    return out;
  } finally {
    await client.query(`DROP SCHEMA "${schema}" CASCADE`);
    await client.end();
    await store.close();
  }
}

for (const name of STORES) {
  const results = name === "sqlite" ? await sqlite() : await postgres();
  console.log(`\n## ${name}, ${ROWS.toLocaleString("en")} rows\n\n| query | rows | ms (best of 5) | plan |\n| --- | ---: | ---: | --- |`);
  for (const r of results) console.log(`| ${r.label} | ${r.rows} | ${r.ms.toFixed(2)} | ${r.plan} |`);
}
