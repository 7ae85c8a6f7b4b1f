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
import { statementsFor } from "../../src/drivers/postgres/statements.js";
import { T0, quietLogger } from "../helpers/common.js";
import { DATABASE_URL, adminQuery, freshStore, useCleanups, useSharedServer } from "./helpers.js";

useSharedServer();
const cleanups = useCleanups();

test("claim(), complete() and enqueue_claim() use no sequential scan after their plans were cached on an empty table", async () => {
  const { schema, store } = freshStore(cleanups);
  const pool = new Workpool(store, { name: "p", clock: new ManualClock(T0), logger: quietLogger, maxParallelism: 5 });
  const job = pool.defineAction("job", (_c, n: number) => n);
  await pool.configure({ maxParallelism: 5 });
  // The statistics now say the table is empty: zero rows on zero pages.
  await adminQuery(`VACUUM ANALYZE "${schema}".work`);

  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  cleanups.push(() => client.end());
  const s = `"${schema}"`;
  const claim = (limit: number) =>
    client.query<{ claimed: unknown[] | null }>(`SELECT claimed FROM ${s}.claim('p', 'w', $1, $2, $3, NULL, NULL)`, [
      T0,
      T0 + 30_000,
      limit,
    ]);
  const complete = (ids: string[], limit: number) =>
    client.query<{ stale: string[]; claimed: unknown[] | null }>(
      `SELECT stale, claimed FROM ${s}.complete('p', $1, '{}', $2, 'ch', 'w', $3, $4, NULL, NULL)`,
      [JSON.stringify(Object.fromEntries(ids.map((id) => [id, [1, "success", "{}", null]]))), T0, T0 + 30_000, limit],
    );
  const enqueueClaim = () =>
    client.query(`SELECT ${s}.enqueue_claim($1, 'p', 'action', 'job', NULL, '1', $2, $2, NULL, NULL, NULL, NULL, 'ch', 'w', $2, $3)`, [
      newWorkId(T0),
      T0,
      T0 + 30_000,
    ]);
  // Ten runs each on the empty table: more than the five custom plans PostgreSQL makes
  // before it settles on a cached generic plan.
  for (let i = 0; i < 10; i++) {
    await claim(5);
    await complete([], 5);
    await client.query("BEGIN");
    await enqueueClaim();
    await client.query("ROLLBACK");
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
  const { schema, store } = freshStore(cleanups);
  await store.migrate();
  const { addStats } = statementsFor(schema);
  const plan = await adminQuery<{ "QUERY PLAN": string }>(`EXPLAIN (VERBOSE, COSTS OFF) ${addStats.text}`, ["p", 1, 1, 0, 0, 0]);
  const text = plan.map((r) => r["QUERY PLAN"]).join("\n");
  expect(text).toMatch(/\(pg_backend_pid\(\) % \d+\)/);
  expect(text).not.toContain("stats_shard");
});
