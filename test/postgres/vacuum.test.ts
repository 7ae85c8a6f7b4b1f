/**
 * The maintenance leader vacuums the work table once the server's statistics count
 * enough dead row versions (the store's `vacuum` option), at most once per interval, and
 * never with `vacuum: false`.
 */
import { expect, test } from "vitest";
import pg from "pg";
import { randomBytes } from "node:crypto";
import { ManualClock, Workpool } from "../../src/index.js";
import { postgresStore, type PostgresStoreOptions } from "../../src/drivers/postgres/index.js";
import { InvalidArgumentError } from "../../src/errors.js";
import { T0, quietLogger } from "../helpers/common.js";
import { DATABASE_URL, adminQuery, dropSchema, randomSchema, until, urlWithUser, useCleanups, useSharedServer } from "./helpers.js";

useSharedServer();
const cleanups = useCleanups();

async function tableStats(schema: string): Promise<{ dead: number; vacuums: number }> {
  const rows = await adminQuery<{ dead: string; vacuums: string }>(
    `SELECT n_dead_tup AS dead, vacuum_count AS vacuums FROM pg_stat_user_tables WHERE relid = $1::regclass`,
    [`"${schema}".work`],
  );
  return { dead: Number(rows[0]?.dead ?? 0), vacuums: Number(rows[0]?.vacuums ?? 0) };
}

/**
 * A pool on a fresh schema (or `schema`, already migrated) whose work table has at least
 * 100 dead rows (100 actions claimed and finished), connected as `url`.
 */
async function churned(vacuum: PostgresStoreOptions["vacuum"], schema = randomSchema(), url = DATABASE_URL) {
  // Connections that close when idle: a backend reports its statistics as it exits,
  // rather than up to 10 s later while it idles in the pool.
  const db = new pg.Pool({ connectionString: url, idleTimeoutMillis: 20 });
  db.on("error", () => undefined);
  const store = postgresStore({ pool: db, schema, vacuum });
  cleanups.push(async () => {
    await store.close();
    await db.end();
    await dropSchema(schema);
  });
  const clock = new ManualClock(T0);
  const pool = new Workpool(store, { name: "v", clock, logger: quietLogger, maxParallelism: 100 });
  const job = pool.defineAction("job", (_c, n: number) => n);
  await pool.enqueueActionBatch(
    job,
    Array.from({ length: 100 }, (_, i) => i),
  );
  // The first tick finds a clean table; then 100 claims and 100 results leave dead rows.
  const first = await pool.runOnce();
  expect(first).toMatchObject({ claimed: 100, leader: true, vacuumed: false });
  // Backends report their statistics to the server a moment after they commit.
  await until(async () => (await tableStats(schema)).dead >= 100, "the dead rows to show in the server's statistics");
  return { schema, pool, clock };
}

test("the leader vacuums the work table once its dead rows reach the threshold, at most once per interval", async () => {
  const { schema, pool, clock } = await churned({ minDeadRows: 100, minIntervalMs: 60_000 });
  // The first tick checked at T0: the next check waits for the interval.
  expect((await pool.runOnce()).vacuumed).toBe(false);
  expect((await tableStats(schema)).vacuums).toBe(0);
  clock.advance(60_000);
  expect((await pool.runOnce()).vacuumed).toBe(true);
  const after = await tableStats(schema);
  expect(after.vacuums).toBe(1);
  expect(after.dead).toBeLessThan(100);
});

test("below the threshold, or with vacuum: false, the leader leaves the table to the server", async () => {
  const high = await churned({ minDeadRows: 1_000_000, minIntervalMs: 0 });
  expect((await high.pool.runOnce()).vacuumed).toBe(false);
  const off = await churned(false);
  expect((await off.pool.runOnce()).vacuumed).toBe(false);
  expect((await tableStats(high.schema)).vacuums).toBe(0);
  expect((await tableStats(off.schema)).vacuums).toBe(0);
});

test("a role that does not own the work table leaves vacuuming to the server", async () => {
  const schema = randomSchema();
  const role = `wp_not_owner_${randomBytes(4).toString("hex")}`;
  // The schema belongs to the test's own role; the store below runs as another one.
  const owner = postgresStore({ connectionString: DATABASE_URL, schema });
  await owner.migrate();
  await owner.close();
  await adminQuery(`CREATE ROLE "${role}" LOGIN`);
  cleanups.push(async () => {
    await dropSchema(schema);
    await adminQuery(`DROP ROLE IF EXISTS "${role}"`);
  });
  await adminQuery(`GRANT USAGE ON SCHEMA "${schema}" TO "${role}"`);
  await adminQuery(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "${schema}" TO "${role}"`);
  const { pool } = await churned({ minDeadRows: 1, minIntervalMs: 0 }, schema, urlWithUser(role));
  expect((await pool.runOnce()).vacuumed).toBe(false);
  expect((await tableStats(schema)).vacuums).toBe(0);
});

test("bad vacuum options are refused with the field and the allowed range", () => {
  const make = (vacuum: unknown) => () =>
    postgresStore({ connectionString: DATABASE_URL, vacuum: vacuum as PostgresStoreOptions["vacuum"] });
  expect(make({ minDeadRows: 0 })).toThrow(InvalidArgumentError);
  expect(make({ minDeadRows: 0 })).toThrow(/vacuum\.minDeadRows.*from 1 to 1000000000, got 0/);
  expect(make({ minIntervalMs: 1.5 })).toThrow(/vacuum\.minIntervalMs.*from 0 to 86400000, got 1\.5/);
  expect(make("yes")).toThrow(/vacuum.*false or an object/);
  expect(make(true)).toThrow(/vacuum.*false or an object/);
});
