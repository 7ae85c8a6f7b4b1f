/**
 * The PostgreSQL claim():
 * - against writers of pending rows in other transactions: a pending row that another
 *   transaction is writing right now (a cancel, say) is skipped (FOR UPDATE SKIP
 *   LOCKED), never waited for, and never turned into running work;
 * - and with the key of the last work this process claimed (see claim() in schema.sql).
 */
import { expect, test } from "vitest";
import pg from "pg";
import { DRIVER } from "../../src/driver/driver.js";
import { ManualClock, Workpool } from "../../src/index.js";
import { T0, quietLogger } from "../helpers/common.js";
import { WALK_FROM_HEAD_EVERY_MS } from "../../src/drivers/postgres/claim.js";
import { DATABASE_URL, adminQuery, useCleanups, useSharedServer } from "./helpers.js";
import { openTestStore } from "../helpers/stores.js";

useSharedServer();
const cleanups = useCleanups();

/** A pool of `maxParallelism` on a fresh schema, its stored config written, with one action. */
async function poolOnFreshSchema(name: string, maxParallelism: number) {
  const { schema, store } = await openTestStore("postgres", { connections: "own", migrate: false, cleanups });
  const pool = new Workpool(store, { name, clock: new ManualClock(T0), logger: quietLogger, maxParallelism });
  const job = pool.defineAction("job", (_c, n: number) => n);
  await pool.configure({ maxParallelism });
  return { schema, store, pool, job };
}

test("a claim skips a pending row another transaction is finishing, without waiting for it", async () => {
  const { schema, store, pool, job } = await poolOnFreshSchema("c", 5);
  const [first, second] = await pool.enqueueActionBatch(job, [1, 2]);

  // Another transaction finishes the older row and holds it, uncommitted.
  const other = new pg.Client({ connectionString: DATABASE_URL });
  await other.connect();
  cleanups.push(() => other.end());
  await other.query("BEGIN");
  await other.query(`UPDATE "${schema}".work SET state = 'finished', finished_at = $2, result = '{"kind":"canceled"}' WHERE id = $1`, [
    first,
    T0,
  ]);

  // The claim returns while that transaction is still open: it took the other row.
  const res = await store[DRIVER].claim("c", { workerId: "w", clock: () => T0, leaseMs: 30_000, limit: 10 });
  expect(res.claimed.map((r) => r.id)).toEqual([second]);
  await other.query("COMMIT");
  expect(await pool.statusBatch([first!, second!])).toEqual([
    { state: "finished", result: { kind: "canceled" } },
    { state: "running", previousAttempts: 0 },
  ]);
});

test("a claim takes due work after the last it claimed first; work due behind that waits for the rows after it to run short, or for the next walk from the head", async () => {
  const { schema, store, pool, job } = await poolOnFreshSchema("k", 100);
  const driver = store[DRIVER];
  const claim = async (now: number, limit: number): Promise<string[]> =>
    (await driver.claim("k", { workerId: "w", clock: () => now, leaseMs: 30_000, limit })).claimed.map((r) => r.id).sort();
  // Due at the same time, so claimed in id order (ids are ASCII: JavaScript sorts them as
  // the index does).
  const ids = (await pool.enqueueActionBatch(job, [1, 2, 3, 4, 5])).sort();

  expect(await claim(T0, 2)).toEqual(ids.slice(0, 2));
  // Work enqueued due in the past sorts before the key (the last work claimed).
  const behind = await pool.enqueueAction(job, 6, { runAt: T0 - 1000 });
  expect(await claim(T0, 1)).toEqual([ids[2]]);
  // Once WALK_FROM_HEAD_EVERY_MS has passed, a claim walks from the head again.
  expect(await claim(T0 + WALK_FROM_HEAD_EVERY_MS, 1)).toEqual([behind]);
  // Within the interval, when the rows after the key are fewer than the free slots, the
  // claim takes the rest from the head.
  const behind2 = await pool.enqueueAction(job, 7, { runAt: T0 - 1000 });
  expect(await claim(T0 + WALK_FROM_HEAD_EVERY_MS + 1, 5)).toEqual([...ids.slice(3), behind2].sort());
  expect(await claim(T0 + WALK_FROM_HEAD_EVERY_MS + 2, 5)).toEqual([]);
  const running = await adminQuery<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".work WHERE state = 'running'`);
  expect(running[0]!.n).toBe(7);
});
