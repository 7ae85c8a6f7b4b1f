// admin.retryAll() on a large table: how long a dry run, a run that retries 100,000
// failed work, and a second run (nothing left) take on both stores, and the plan of the
// page query on PostgreSQL. Fills one pool with `--rows` finished work, every 5th failed,
// the rest succeeded. Results: notes/retry-all.md.
//
//   npm run build && node bench/retry-all.mjs [--rows=500000] [--store=sqlite,postgres]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { PG_URL } from "./lib/env.mjs";
import { ensureDatabase } from "./lib/pg.mjs";

const dist = new URL("../dist/", import.meta.url);
const { newWorkId } = await import(new URL("ids.js", dist).href);
const { sqliteStore } = await import(new URL("drivers/sqlite/index.js", dist).href);
const { postgresStore } = await import(new URL("drivers/postgres/index.js", dist).href);
const { workpoolAdmin } = await import(new URL("admin/index.js", dist).href);
const { ManualClock } = await import(new URL("index.js", dist).href);

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, "").split("=")));
const ROWS = Number(args.rows ?? 500_000);
const STORES = (args.store ?? "sqlite,postgres").split(",");
const NOW = Date.UTC(2030, 0, 1);

/** The rows, oldest first, one every 10 ms: every 5th failed, the rest succeeded; ten handlers in turn. */
function* rows() {
  for (let i = 0; i < ROWS; i++) {
    const t = NOW - (ROWS - i) * 10;
    const result = i % 5 === 0 ? '{"kind":"failed","error":"boom"}' : '{"kind":"success","returnValue":1}';
    yield [newWorkId(t), `handler${i % 10}`, `{"n":${i}}`, t, result];
  }
}

/** Times one admin call; prints and returns ms, the call's count and the heap it added, MB. */
async function timed(label, fn) {
  const heap = process.memoryUsage().heapUsed;
  const t = performance.now();
  const r = await fn();
  const ms = performance.now() - t;
  const line = { label, count: r.count, ms: Math.round(ms), heapMb: Math.round((process.memoryUsage().heapUsed - heap) / 1e6) };
  console.log(JSON.stringify(line));
  return line;
}

/** The calls on `store`: dry runs, the run, and a second run with nothing left. */
async function measure(store) {
  const admin = workpoolAdmin(store, { clock: new ManualClock(NOW) });
  const failed = { state: "failed" };
  await timed("dry run", () => admin.retryAll("big", failed, { dryRun: true }));
  await timed("dry run, one handler (half the failed)", () => admin.retryAll("big", { ...failed, handler: "handler5" }, { dryRun: true }));
  await timed("dry run, the last tenth of the time", () =>
    admin.retryAll("big", { ...failed, finishedAfter: NOW - ROWS }, { dryRun: true }),
  );
  await timed("run", () => admin.retryAll("big", failed));
  await timed("second run", () => admin.retryAll("big", failed));
}

async function sqlite() {
  const dir = mkdtempSync(join(tmpdir(), "workpool-retry-all-"));
  const store = sqliteStore({ filename: join(dir, "r.db"), synchronous: "NORMAL" });
  const insert = store.db.prepare(`INSERT INTO workpool_work (id, pool, kind, fn_name, args, state, run_at, enqueued_at, attempt,
    started_at, result, finished_at) VALUES (?, 'big', 'action', ?, ?, 'finished', ?, ?, 1, ?, ?, ?)`);
  store.db.transaction(() => {
    for (const [id, fn, a, t, result] of rows()) insert.run(id, fn, a, t, t, t, result, t + 5);
  })();
  store.db.exec("ANALYZE");
  try {
    return await measure(store);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgres() {
  await ensureDatabase();
  const schema = `retry_all_${process.pid}`;
  const store = postgresStore({ connectionString: PG_URL, schema, vacuum: false });
  await store.migrate();
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    let batch = [];
    const flush = async () => {
      const arrays = [0, 1, 2, 3, 4].map((c) => batch.map((r) => r[c]));
      await client.query(
        `INSERT INTO "${schema}".work (id, pool, kind, fn_name, args, state, run_at, enqueued_at, attempt, started_at, result, finished_at)
         SELECT a, 'big', 'action', b, c, 'finished', d, d, 1, d, e, d + 5
         FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[]) AS u(a, b, c, d, e)`,
        arrays,
      );
      batch = [];
    };
    for (const r of rows()) {
      batch.push(r);
      if (batch.length === 10_000) await flush();
    }
    if (batch.length) await flush();
    await client.query(`VACUUM ANALYZE "${schema}".work`);
    const plan = await client.query(
      `EXPLAIN (ANALYZE, COSTS OFF) SELECT w.id FROM "${schema}".work w WHERE w.pool = 'big' AND w.state = 'finished'
        AND w.result NOT LIKE '{"kind":"success"%' AND w.result LIKE '{"kind":"failed"%' AND w.retried_as IS NULL
        AND NOT starts_with(w.fn_name, 'workpool:workflow.')
        AND (w.on_complete IS NULL OR NOT starts_with(w.on_complete, 'workpool:workflow.'))
        ORDER BY w.id LIMIT 500`,
    );
    console.log(plan.rows.map((r) => r["QUERY PLAN"]).join("\n"));
    return await measure(store);
  } finally {
    await store.close();
    await client.query(`DROP SCHEMA "${schema}" CASCADE`);
    await client.end();
  }
}

for (const name of STORES) {
  console.log(`== ${name}, ${ROWS} rows, ${ROWS / 5} failed`);
  if (name === "sqlite") await sqlite();
  else if (name === "postgres") await postgres();
}
