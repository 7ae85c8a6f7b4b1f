#!/usr/bin/env node
// The server's side of a drain on PostgreSQL, without the worker: complete() of a batch of
// results plus the claim of the freed slots, in a loop on one connection with
// synchronous_commit = off (so the server's work is measured, not the WAL flush), for one
// or more builds side by side. Each build gets its own schema and backlog; the builds take
// turns in blocks of `--block` calls (A B A B …), and each block prints µs per job. See
// notes/priorities-keys.md.
//
//   node claim-loop.mjs [--builds=../dist,<another build's dist>] [--keys=0] [--batch=10] [--block=200] [--rounds=8]
//                       [--vacuum-every=10000]
//
// --keys=N spreads the backlog over N keys (no per-key limit); 0: work without keys.
// --vacuum-every: VACUUM a build's table between blocks once this many jobs were claimed since
// its last one, as the store's maintenance does by default (0: never); not timed.
// Needs `npm run build` at the repository root. PostgreSQL: BENCH_PG_URL as for the bench.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { PG_URL } from "./lib/env.mjs";
import { dropSchema, ensureDatabase } from "./lib/pg.mjs";

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, "").split("=")));
const builds = (args.builds ?? "../dist").split(",").map((p) => pathToFileURL(resolve(p) + "/"));
const KEYS = Number(args.keys ?? 0);
const BATCH = Number(args.batch ?? 10);
const BLOCK = Number(args.block ?? 200);
const ROUNDS = Number(args.rounds ?? 8);
const VACUUM_EVERY = Number(args["vacuum-every"] ?? 10_000);
const POOL = "loop";
const T0 = Date.UTC(2030, 0, 1);

/** One build's schema, filled with enough due work for every block, and its connection. */
async function prepare(dist, i) {
  const { DRIVER } = await import(new URL("driver/driver.js", dist).href);
  const { newWorkId } = await import(new URL("ids.js", dist).href);
  const { postgresStore } = await import(new URL("drivers/postgres/index.js", dist).href);
  const schema = `claim_loop_${i}`;
  await dropSchema(schema);
  const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
  const store = postgresStore({ pool, schema, vacuum: false });
  const driver = store[DRIVER];
  await driver.migrate();
  await driver.ensurePool(POOL, { maxParallelism: BATCH, logLevel: "ERROR", keyParallelism: null }, {});
  const n = BATCH * BLOCK * ROUNDS + BATCH;
  for (let i = 0; i < n; i += 10_000) {
    const rows = Array.from({ length: Math.min(10_000, n - i) }, (_, j) => ({
      id: newWorkId(T0),
      pool: POOL,
      kind: "action",
      fnName: "job",
      name: null,
      args: `{"i":${i + j}}`,
      runAt: T0 - n + i + j,
      enqueuedAt: T0,
      retry: null,
      timeoutMs: null,
      onComplete: null,
      context: null,
      priority: 0,
      key: KEYS ? `k${(i + j) % KEYS}` : null,
      meta: null,
      uniqueKey: null,
      onConflict: "keep",
    }));
    await driver.insertWork(rows);
  }
  await pool.query(`VACUUM ANALYZE "${schema}".work`);
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query("SET synchronous_commit = off");
  const s = `"${schema}"`;
  const first = await client.query(`SELECT claimed FROM ${s}.claim($1, 'w', $2, $3, $4, NULL, NULL, NULL)`, [POOL, T0, T0 + 60_000, BATCH]);
  return { schema, store, pool, client, s, held: first.rows[0].claimed ?? [], last: null, fromHeadAt: 0, sinceVacuum: 0 };
}

/**
 * `BLOCK` calls of complete() that finish the rows held and claim as many, each passing the
 * last row claimed as the worker does (and no row every 100 ms, as the worker's walk from
 * the head): µs per job.
 */
async function block(b) {
  const t = performance.now();
  let jobs = 0;
  for (let i = 0; i < BLOCK; i++) {
    const outcomes = JSON.stringify(Object.fromEntries(b.held.map((r) => [r[0], [1, "success", "{}", null]])));
    const now = performance.now();
    const fromHead = now - b.fromHeadAt >= 100;
    if (fromHead) b.fromHeadAt = now;
    const after = fromHead || !b.last ? [null, null, null] : [b.last[13], b.last[5], b.last[0]];
    const { rows } = await b.client.query(`SELECT claimed FROM ${b.s}.complete($1, $2, '{}', $3, 'ch', 'w', $4, $5, $6, $7, $8)`, [
      POOL,
      outcomes,
      T0,
      T0 + 60_000,
      BATCH,
      ...after,
    ]);
    jobs += b.held.length;
    b.held = rows[0].claimed ?? [];
    // The last in claim order (priority, run_at, id): ids are ASCII, compared as the index does.
    for (const r of b.held)
      if (!b.last || r[13] > b.last[13] || (r[13] === b.last[13] && (r[5] > b.last[5] || (r[5] === b.last[5] && r[0] > b.last[0]))))
        b.last = r;
  }
  return ((performance.now() - t) * 1000) / jobs;
}

await ensureDatabase();
const all = [];
for (let i = 0; i < builds.length; i++) all.push(await prepare(builds[i], i));
const times = all.map(() => []);
for (let r = 0; r < ROUNDS; r++) {
  // Alternate which build goes first, so neither always follows the other.
  const order = r % 2 ? [...all.keys()].reverse() : [...all.keys()];
  for (const i of order) {
    times[i].push(await block(all[i]));
    all[i].sinceVacuum += BATCH * BLOCK;
    if (VACUUM_EVERY && all[i].sinceVacuum >= VACUUM_EVERY) {
      await all[i].client.query(`VACUUM ${all[i].s}.work`);
      all[i].sinceVacuum = 0;
    }
  }
  console.log(`round ${r + 1}: ${times.map((t) => `${t.at(-1).toFixed(1)} µs/job`).join("  ")}`);
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`median: ${times.map((t) => `${median(t).toFixed(1)} µs/job`).join("  ")}`);
if (all.length === 2) {
  console.log(`median of the paired ratios (second / first): ${median(times[1].map((t, i) => t / times[0][i])).toFixed(3)}`);
}
for (const b of all) {
  await b.client.end();
  await b.store.close();
  await b.pool.end();
  await dropSchema(b.schema);
}
