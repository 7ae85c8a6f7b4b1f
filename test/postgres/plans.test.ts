/**
 * The functions on the hot path keep to the indexes whatever the table's statistics said
 * when a connection cached their plans. A plan cached while the statistics said "empty"
 * (a vacuumed, drained table) would otherwise be a sequential scan, still used once the
 * table holds a large backlog. And the schema's stats_shard() costs nothing: the planner
 * inlines it.
 */
import { expect, test } from "vitest";
import pg from "pg";
import { ManualClock, Workpool } from "../../src/index.js";
import { newWorkId } from "../../src/ids.js";
import { poolSql } from "../../src/drivers/postgres/pools.js";
import { statementsOf } from "../../src/drivers/postgres/statements.js";
import { T0, quietLogger } from "../helpers/common.js";
import { DATABASE_URL, adminQuery, useCleanups, useSharedServer } from "./helpers.js";
import { openTestStore } from "../helpers/stores.js";

useSharedServer();
const cleanups = useCleanups();

test("claim(), complete() and enqueue_claim() use no sequential scan after their plans were cached on an empty table, with and without a per-key limit", async () => {
  const { schema, store } = await openTestStore("postgres", { connections: "own", migrate: false, cleanups });
  const pool = new Workpool(store, { name: "p", clock: new ManualClock(T0), logger: quietLogger, maxParallelism: 5 });
  const job = pool.defineAction("job", (_c, n: number) => n);
  await pool.configure({ maxParallelism: 5 });
  // And a pool with a per-key limit, whose claims walk and park keyed work.
  const keyed = new Workpool(store, { name: "q", clock: new ManualClock(T0), logger: quietLogger, maxParallelism: 5 });
  const keyedJob = keyed.defineAction("job", (_c, n: number) => n);
  await keyed.configure({ maxParallelism: 5, keyParallelism: 1 });
  // The statistics now say the table is empty: zero rows on zero pages.
  await adminQuery(`VACUUM ANALYZE "${schema}".work`);

  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  cleanups.push(() => client.end());
  const s = `"${schema}"`;
  const claim = (limit: number, name = "p") =>
    client.query<{ claimed: unknown[] | null }>(`SELECT claimed FROM ${s}.claim($4, 'w', $1, $2, $3, NULL, NULL, NULL)`, [
      T0,
      T0 + 30_000,
      limit,
      name,
    ]);
  const complete = (ids: string[], limit: number, name = "p") =>
    client.query<{ stale: string[]; claimed: unknown[] | null }>(
      `SELECT stale, claimed FROM ${s}.complete($5, $1, '{}', $2, 'ch', 'w', $3, $4, NULL, NULL, NULL)`,
      [JSON.stringify(Object.fromEntries(ids.map((id) => [id, [1, "success", "{}", null]]))), T0, T0 + 30_000, limit, name],
    );
  const enqueueClaim = (name = "p", key: string | null = null) =>
    client.query(
      `SELECT ${s}.enqueue_claim($1, $4, 'action', 'job', NULL, '1', $2, $2, NULL, NULL, NULL, NULL, 0, $5, NULL, 'ch', 'w', $2, $3)`,
      [newWorkId(T0), T0, T0 + 30_000, name, key],
    );
  // Ten runs each on the empty table: more than the five custom plans PostgreSQL makes
  // before it settles on a cached generic plan.
  for (let i = 0; i < 10; i++) {
    for (const name of ["p", "q"]) {
      await claim(5, name);
      await complete([], 5, name);
      await client.query("BEGIN");
      await enqueueClaim(name, name === "q" ? "k" : null);
      await client.query("ROLLBACK");
    }
  }

  // A backlog arrives; nothing has told this connection to plan again.
  await pool.enqueueActionBatch(
    job,
    Array.from({ length: 500 }, (_, i) => i),
  );
  await client.query("BEGIN");
  const claimed = await claim(5);
  expect(claimed.rows[0]!.claimed).toHaveLength(5);
  const ids = (claimed.rows[0]!.claimed as [string][]).map((r) => r[0]);
  const completed = await complete(ids, 5);
  expect(completed.rows[0]!.stale).toEqual([]);
  expect(completed.rows[0]!.claimed).toHaveLength(5);
  await enqueueClaim();
  // The keyed pool: 500 rows of 5 keys, a claim that takes one of each and parks the
  // rest it walks past, then results that free the keys and claim again.
  for (let k = 0; k < 5; k++) {
    await keyed.enqueueActionBatch(
      keyedJob,
      Array.from({ length: 100 }, (_, i) => i),
      { key: `k${k}`, priority: k % 2 },
    );
  }
  const keyedClaim = await claim(5, "q");
  expect(keyedClaim.rows[0]!.claimed).toHaveLength(5);
  const keyedIds = (keyedClaim.rows[0]!.claimed as [string][]).map((r) => r[0]);
  expect((await complete(keyedIds, 5, "q")).rows[0]!.claimed).toHaveLength(5);
  await enqueueClaim("q", "k9");
  // This transaction's own scans of the table, counted by the server.
  const scans = await client.query<{ seq_scan: string; idx_scan: string }>(
    "SELECT seq_scan, idx_scan FROM pg_stat_xact_user_tables WHERE relid = $1::regclass",
    [`${s}.work`],
  );
  await client.query("ROLLBACK");
  expect(Number(scans.rows[0]!.idx_scan)).toBeGreaterThan(0);
  expect(Number(scans.rows[0]!.seq_scan)).toBe(0);
});

test("stats_shard() is inlined: the plan of the counters' insert computes the shard itself", async () => {
  const { schema } = await openTestStore("postgres", { connections: "own", cleanups });
  const { addStats } = statementsOf(schema, poolSql);
  const plan = await adminQuery<{ "QUERY PLAN": string }>(`EXPLAIN (VERBOSE, COSTS OFF) ${addStats.text}`, ["p", 1, 1, 0, 0, 0]);
  const text = plan.map((r) => r["QUERY PLAN"]).join("\n");
  expect(text).toMatch(/\(pg_backend_pid\(\) % \d+\)/);
  expect(text).not.toContain("stats_shard");
});

test("complete() finds a batch's rows by tuple id, not through the running index, and runs attempt_log_append() only for attempts that threw", async () => {
  const { schema, store } = await openTestStore("postgres", { connections: "own", migrate: false, cleanups });
  const pool = new Workpool(store, { name: "p", clock: new ManualClock(T0), logger: quietLogger, maxParallelism: 20 });
  const job = pool.defineAction("job", (_c, n: number) => n);
  await pool.configure({ maxParallelism: 20 });
  await pool.enqueueActionBatch(
    job,
    Array.from({ length: 20 }, (_, i) => i),
  );
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  cleanups.push(() => client.end());
  const s = `"${schema}"`;
  const claimed = await client.query<{ claimed: [string][] }>(`SELECT claimed FROM ${s}.claim('p', 'w', $1, $2, 20, NULL, NULL, NULL)`, [
    T0,
    T0 + 30_000,
  ]);
  const ids = claimed.rows[0]!.claimed.map((r) => r[0]);
  const entry = { attempt: 1, startedAt: T0, endedAt: T0, outcome: "failed", error: { message: "boom" } };
  // This transaction's use of the running index and of attempt_log_append(), counted by the server.
  const usage = async () => {
    const index = await client.query<{ n: string }>("SELECT pg_stat_get_xact_numscans($1::regclass) AS n", [`${s}.work_running`]);
    const calls = await client.query<{ n: string }>(
      "SELECT coalesce(sum(calls), 0) AS n FROM pg_stat_xact_user_functions WHERE schemaname = $1 AND funcname = 'attempt_log_append'",
      [schema],
    );
    return { runningIndexScans: Number(index.rows[0]!.n), appendCalls: Number(calls.rows[0]!.n) };
  };
  await client.query("BEGIN");
  await client.query("SET LOCAL track_functions = 'all'");
  // The counts read are those not yet sent to the server's statistics (the claim's too): differences count.
  const before = await usage();
  // Ten successes, then ten failures with an attempt-log entry each; no claim (p_limit 0).
  const outcomes = (batch: string[], failed: boolean) =>
    JSON.stringify(Object.fromEntries(batch.map((id) => [id, failed ? [1, "failed", "{}", null, entry] : [1, "success", "{}", null]])));
  for (let i = 0; i < 6; i++) {
    // More calls than the custom plans PostgreSQL makes before it settles on a generic one.
    await client.query("SAVEPOINT again");
    await client.query(`SELECT stale FROM ${s}.complete('p', $1, '{}', $2, 'ch', 'w', 0, 0, NULL, NULL, NULL)`, [
      outcomes(ids.slice(0, 10), false),
      T0,
    ]);
    if (i < 5) await client.query("ROLLBACK TO SAVEPOINT again");
  }
  const afterSuccesses = await usage();
  expect(afterSuccesses).toEqual(before);
  const failed = await client.query<{ stale: string[] }>(
    `SELECT stale FROM ${s}.complete('p', $1, '{}', $2, 'ch', 'w', 0, 0, NULL, NULL, NULL)`,
    [outcomes(ids.slice(10), true), T0],
  );
  expect(failed.rows[0]!.stale).toEqual([]);
  expect((await usage()).appendCalls - afterSuccesses.appendCalls).toBe(10);
  const logs = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${s}.work WHERE attempt_log IS NOT NULL`);
  expect(logs.rows[0]!.n).toBe(10);
  await client.query("ROLLBACK");
});
