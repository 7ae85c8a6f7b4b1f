/**
 * The PostgreSQL driver's complete() (a batch of action results and the claim of the
 * freed slots in one statement), called directly: fencing by attempt, the claim in the
 * same statement, and that work with an onComplete handler is never left undelivered
 * (the core does not send such work here, but the store must not drop it if it did).
 */
import { expect, test } from "vitest";
import { DRIVER, type ClaimOptions } from "../../src/driver/driver.js";
import { ManualClock, toWorkId, Workpool } from "../../src/index.js";
import { T0, quietLogger as quiet } from "../helpers/common.js";
import { useCleanups, useSharedServer } from "./helpers.js";
import { openTestStore } from "../helpers/stores.js";

useSharedServer();
const cleanups = useCleanups();

async function setup() {
  const { schema, store } = await openTestStore("postgres", { connections: "own", migrate: false, cleanups });
  const clock = new ManualClock(T0);
  const pool = new Workpool(store, { name: "c", clock, logger: quiet, maxParallelism: 2 });
  const delivered: unknown[] = [];
  const done = pool.defineOnComplete("done", (_c, args) => {
    delivered.push(args.result);
  });
  const job = pool.defineAction("job", (_c, n: number) => n);
  // Stores the pool's config, as starting a worker would.
  await pool.configure({ maxParallelism: 2 });
  const claim = (limit: number): ClaimOptions => ({ workerId: "w", clock: () => clock.now(), leaseMs: 30_000, limit });
  return { schema, store, driver: store[DRIVER], pool, job, done, delivered, claim, clock };
}

const success = (value: unknown) => JSON.stringify({ kind: "success", returnValue: value });

test("results of attempts that are no longer current are not written; the claim refills the freed slots", async () => {
  const { driver, pool, job, claim } = await setup();
  const ids = await pool.enqueueActionBatch(job, [1, 2, 3]);
  const first = await driver.claim("c", claim(10));
  // maxParallelism 2: one of the three waits.
  expect(first.claimed).toHaveLength(2);
  const [a, b] = first.claimed;
  const waiting = ids.find((id) => id !== a!.id && id !== b!.id);
  const res = await driver.complete!(
    "c",
    [
      { id: a!.id, attempt: a!.attempt, status: "success", result: success(1), runAt: null },
      // An attempt number the row is not on (as if it had been rescued meanwhile).
      { id: b!.id, attempt: b!.attempt + 1, status: "success", result: success(2), runAt: null },
    ],
    T0,
    claim(10),
  );
  // b's write did not apply.
  expect(res.stale).toEqual([b!.id]);
  expect(res.canceled).toEqual([]);
  // One slot freed, one claimed: the waiting work, in the same statement.
  expect(res.claim!.claimed.map((r) => r.id)).toEqual([waiting]);
  expect(res.claim!.claimed[0]).toMatchObject({ state: "running", attempt: 1, workerId: "w", pool: "c" });
  expect(res.claim!.running).toBe(2);
  expect(await pool.statusBatch([toWorkId(a!.id), toWorkId(b!.id), waiting!])).toEqual([
    { state: "finished", result: { kind: "success", returnValue: 1 } },
    { state: "running", previousAttempts: 0 },
    { state: "running", previousAttempts: 0 },
  ]);
  expect(await driver.readStats("c")).toMatchObject({ completed: 1, succeeded: 1 });
});

test("a retrying outcome puts the work back to pending until its time; no claim when none is asked for", async () => {
  const { driver, pool, job, claim } = await setup();
  const id = await pool.enqueueAction(job, 1, { retry: true });
  const [row] = (await driver.claim("c", claim(10))).claimed;
  const res = await driver.complete!("c", [{ id, attempt: row!.attempt, status: "retrying", result: null, runAt: T0 + 500 }], T0, null);
  expect(res).toEqual({ stale: [], canceled: [], claim: null });
  expect(await pool.status(id)).toEqual({ state: "pending", previousAttempts: 1 });
  expect((await driver.claim("c", claim(10))).claimed).toEqual([]);
  expect(await driver.readStats("c")).toMatchObject({ completed: 1, retries: 1 });
});

test("work with an onComplete handler is marked for delivery, and maintenance delivers it once", async () => {
  const { driver, pool, job, done, delivered, claim } = await setup();
  const id = await pool.enqueueAction(job, 7, { onComplete: done });
  const [row] = (await driver.claim("c", claim(10))).claimed;
  await driver.complete!("c", [{ id, attempt: row!.attempt, status: "success", result: success(7), runAt: null }], T0, null);
  expect(delivered).toEqual([]);
  expect((await driver.readWork("c", [id]))[0]).toMatchObject({ state: "finished", ocState: "pending" });
  await pool.runOnce();
  await pool.runOnce();
  expect(delivered).toEqual([{ kind: "success", returnValue: 7 }]);
  expect((await driver.readWork("c", [id]))[0]).toMatchObject({ ocState: "done" });
});
