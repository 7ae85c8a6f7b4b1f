/**
 * The PostgreSQL claim() against writers of pending rows in other transactions. claim()
 * takes no row locks of its own (claims of a pool are serialized by the pool row's
 * lock); a pending row that another transaction is finishing (a cancel) must make the
 * claim wait and then skip it, never turn it back into running work.
 */
import { expect, test } from "vitest";
import pg from "pg";
import { DRIVER } from "../../src/driver/driver.js";
import { ManualClock, Workpool } from "../../src/index.js";
import { T0, quietLogger } from "../helpers/common.js";
import { DATABASE_URL, adminQuery, freshStore, until, useCleanups, useSharedServer } from "./helpers.js";

useSharedServer();
const cleanups = useCleanups();

test("a claim waits for a concurrent cancel of a pending row it picked, then skips that row", async () => {
  const { schema, store } = freshStore(cleanups);
  const clock = new ManualClock(T0);
  const pool = new Workpool(store, { name: "c", clock, logger: quietLogger, maxParallelism: 5 });
  const job = pool.defineAction("job", (_c, n: number) => n);
  await pool.configure({ maxParallelism: 5 });
  const [first, second] = await pool.enqueueActionBatch(job, [1, 2]);

  // Another transaction finishes the older row and holds it uncommitted.
  const other = new pg.Client({ connectionString: DATABASE_URL });
  await other.connect();
  cleanups.push(() => other.end());
  await other.query("BEGIN");
  await other.query(
    `UPDATE "${schema}".work SET state = 'finished', finished_at = $2, result = '{"kind":"canceled"}' WHERE id = $1`,
    [first, T0],
  );

  const claiming = store[DRIVER].claim("c", { workerId: "w", now: T0, leaseUntil: T0 + 30_000, limit: 10 });
  await until(async () => {
    const rows = await adminQuery(
      `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
      [`%"${schema}".claim(%`],
    );
    return rows.length > 0;
  }, "the claim to wait for the row lock");
  await other.query("COMMIT");

  const res = await claiming;
  expect(res.claimed.map((r) => r.id)).toEqual([second]);
  expect(await pool.statusBatch([first!, second!])).toEqual([
    { state: "finished", result: { kind: "canceled" } },
    { state: "running", previousAttempts: 0 },
  ]);
});
