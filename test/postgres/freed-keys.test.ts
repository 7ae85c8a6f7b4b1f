/**
 * The notes of freed keys on PostgreSQL (see freed_keys in schema.sql): transactions that
 * end attempts of the same keys never wait on each other's notes, whatever the order, and
 * a claim gives a freed key's parked work back.
 */
import { expect, test } from "vitest";
import pg from "pg";
import { DRIVER } from "../../src/driver/driver.js";
import { ManualClock, Workpool } from "../../src/index.js";
import { T0, quietLogger } from "../helpers/common.js";
import { DATABASE_URL, useCleanups, useSharedServer } from "./helpers.js";
import { openTestStore } from "../helpers/stores.js";

useSharedServer();
const cleanups = useCleanups();

async function client(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: DATABASE_URL });
  c.on("error", () => undefined);
  await c.connect();
  cleanups.push(() => c.end());
  return c;
}

test("two transactions ending attempts of the same two keys in opposite orders both commit", async () => {
  const { schema, store } = await openTestStore("postgres", { connections: "own", migrate: false, cleanups });
  const pool = new Workpool(store, { name: "k", clock: new ManualClock(T0), logger: quietLogger, maxParallelism: 10, keyParallelism: 2 });
  const job = pool.defineAction("job", () => 1);
  await pool.configure({ keyParallelism: 2 });
  const [a0, a1] = await pool.enqueueActionBatch(job, [{}, {}], { key: "k0" });
  const [b0, b1] = await pool.enqueueActionBatch(job, [{}, {}], { key: "k1" });
  const claimed = await store[DRIVER].claim("k", { workerId: "w", clock: () => T0, leaseMs: 30_000, limit: 10 });
  expect(claimed.claimed).toHaveLength(4);

  const finish = `UPDATE "${schema}".work SET state = 'finished', finished_at = $2, result = '{"kind":"success"}' WHERE id = $1`;
  const [t1, t2] = [await client(), await client()];
  await t1.query("BEGIN");
  await t2.query("BEGIN");
  await t1.query(finish, [a0, T0]);
  await t2.query(finish, [b0, T0]);
  // Each now ends an attempt of the key the other noted first. With a unique index on the
  // notes, t1 would wait for t2's uncommitted note and t2 for t1's: a deadlock.
  const second = await Promise.allSettled([t1.query(finish, [b1, T0]), t2.query(finish, [a1, T0])]);
  expect(second.map((r) => (r.status === "rejected" ? String(r.reason) : "ok"))).toEqual(["ok", "ok"]);
  await t1.query("COMMIT");
  await t2.query("COMMIT");
  expect((await store[DRIVER].counts("k", T0)).running).toBe(0);
});

test("a key at its limit has its due work parked; once its attempts end, the next claim takes that work", async () => {
  const { store } = await openTestStore("postgres", { connections: "own", migrate: false, cleanups });
  const clock = new ManualClock(T0);
  const pool = new Workpool(store, { name: "k", clock, logger: quietLogger, maxParallelism: 10, keyParallelism: 1 });
  const job = pool.defineAction("job", () => 1);
  await pool.configure({ keyParallelism: 1 });
  const ids = await pool.enqueueActionBatch(job, [{}, {}, {}], { key: "k" });
  for (const id of ids) {
    await pool.runOnce();
    expect(await pool.status(id)).toMatchObject({ state: "finished" });
  }
  expect((await store[DRIVER].counts("k", T0)).pending).toBe(0);
});
