/**
 * The PostgreSQL claim() against writers of pending rows in other transactions: a
 * pending row that another transaction is writing right now (a cancel, say) is skipped
 * (FOR UPDATE SKIP LOCKED), never waited for, and never turned into running work.
 */
import { expect, test } from "vitest";
import pg from "pg";
import { DRIVER } from "../../src/driver/driver.js";
import { ManualClock, Workpool } from "../../src/index.js";
import { T0, quietLogger } from "../helpers/common.js";
import { DATABASE_URL, freshStore, useCleanups, useSharedServer } from "./helpers.js";

useSharedServer();
const cleanups = useCleanups();

test("a claim skips a pending row another transaction is finishing, without waiting for it", async () => {
  const { schema, store } = freshStore(cleanups);
  const clock = new ManualClock(T0);
  const pool = new Workpool(store, { name: "c", clock, logger: quietLogger, maxParallelism: 5 });
  const job = pool.defineAction("job", (_c, n: number) => n);
  await pool.configure({ maxParallelism: 5 });
  const [first, second] = await pool.enqueueActionBatch(job, [1, 2]);

  // Another transaction finishes the older row and holds it, uncommitted.
  const other = new pg.Client({ connectionString: DATABASE_URL });
  await other.connect();
  cleanups.push(() => other.end());
  await other.query("BEGIN");
  await other.query(
    `UPDATE "${schema}".work SET state = 'finished', finished_at = $2, result = '{"kind":"canceled"}' WHERE id = $1`,
    [first, T0],
  );

  // The claim returns while that transaction is still open: it took the other row.
  const res = await store[DRIVER].claim("c", { workerId: "w", now: T0, leaseUntil: T0 + 30_000, limit: 10 });
  expect(res.claimed.map((r) => r.id)).toEqual([second]);
  await other.query("COMMIT");
  expect(await pool.statusBatch([first!, second!])).toEqual([
    { state: "finished", result: { kind: "canceled" } },
    { state: "running", previousAttempts: 0 },
  ]);
});
