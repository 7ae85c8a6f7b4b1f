/**
 * Enqueue-and-claim on PostgreSQL: an enqueue in a process whose worker has room inserts
 * the work already running for that worker (one commit), but only when the pool has a
 * free slot and no older due work waits; otherwise it is an ordinary enqueue.
 */
import { expect, test } from "vitest";
import { DRIVER, type ClaimOptions, type NewWork, type WorkRow } from "../../src/driver/driver.js";
import type { PostgresDriver } from "../../src/drivers/postgres/driver.js";
import { ManualClock, toWorkId, Workpool } from "../../src/index.js";
import { deferred, nextEvent, T0, quietLogger as quiet } from "../helpers/common.js";
import { postgresStore } from "../../src/drivers/postgres/index.js";
import { DATABASE_URL, useCleanups, useSharedServer } from "./helpers.js";
import { openTestStore } from "../helpers/stores.js";
import { newWork } from "../helpers/new-work.js";

useSharedServer();
const cleanups = useCleanups();

async function setup(maxParallelism = 2) {
  const { schema, store } = await openTestStore("postgres", { connections: "own", migrate: false, cleanups });
  const clock = new ManualClock(T0);
  const pool = new Workpool(store, { name: "e", clock, logger: quiet, maxParallelism });
  const job = pool.defineAction("job", (_c, n: number) => n);
  await pool.configure({ maxParallelism });
  const driver = store[DRIVER] as PostgresDriver;
  const newRow = (runAt = T0): NewWork => newWork("e", T0, { args: "1", runAt });
  const claim: ClaimOptions = { workerId: "w", clock: () => T0, leaseMs: 30_000, limit: 1 };
  return { schema, store, driver, pool, job, clock, newRow, claim };
}

test("with a free slot and nothing waiting, the new work is inserted running for the worker", async () => {
  const { driver, pool, newRow, claim } = await setup();
  const row = newRow();
  const claimed = await driver.insertAndClaim(row, claim);
  expect(claimed).toMatchObject({ id: row.id, state: "running", attempt: 1, workerId: "w", leaseUntil: T0 + 30_000, startedAt: T0 });
  expect((await driver.readWork("e", [row.id]))[0]).toMatchObject({ state: "running", attempt: 1, workerId: "w", leaseUntil: T0 + 30_000 });
  expect(await pool.status(toWorkId(row.id))).toEqual({ state: "running", previousAttempts: 0 });
});

test("older due work, a full pool, a paused pool or a future run time leave the new work pending", async () => {
  const { driver, pool, newRow, claim } = await setup(1);
  // Due work already waiting: the new work must not jump ahead of it.
  const older = newRow();
  await driver.insertWork([older]);
  const behind = newRow();
  expect(await driver.insertAndClaim(behind, claim)).toBeNull();
  expect(await pool.statusBatch([toWorkId(older.id), toWorkId(behind.id)])).toEqual([
    { state: "pending", previousAttempts: 0 },
    { state: "pending", previousAttempts: 0 },
  ]);
  // The pool full (maxParallelism 1, one running).
  const full = await setup(1);
  expect(await full.driver.insertAndClaim(full.newRow(), full.claim)).not.toBeNull();
  const second = full.newRow();
  expect(await full.driver.insertAndClaim(second, full.claim)).toBeNull();
  expect((await full.driver.readWork("e", [second.id]))[0]!.state).toBe("pending");
  // Paused.
  const paused = await setup(0);
  expect(await paused.driver.insertAndClaim(paused.newRow(), paused.claim)).toBeNull();
  // Not due yet.
  const later = await setup();
  const scheduled = later.newRow(T0 + 1000);
  expect(await later.driver.insertAndClaim(scheduled, later.claim)).toBeNull();
  expect((await later.driver.readWork("e", [scheduled.id]))[0]).toMatchObject({ state: "pending", runAt: T0 + 1000 });
});

test("a started pool runs work enqueued in its own process through one statement", async () => {
  const { driver, pool, job } = await setup();
  const results: (WorkRow | null)[] = [];
  const real = driver.insertAndClaim.bind(driver);
  driver.insertAndClaim = async (row, claim) => {
    const claimed = await real(row, claim);
    results.push(claimed);
    return claimed;
  };
  await pool.start();
  cleanups.push(() => pool.stop({ timeoutMs: 0 }));
  const id = await pool.enqueueAction(job, 21);
  const done = await nextEvent(pool, "completed", (e) => e.workId === id);
  expect(done.status).toBe("success");
  expect(results.map((r) => r?.id)).toEqual([id]);
  expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: 21 } });
});

test("work claimed by an enqueue while its worker stops is handed back unstarted, before stop() resolves", async () => {
  const { driver, pool, job } = await setup();
  const gate = deferred();
  const entered = deferred();
  const real = driver.insertAndClaim.bind(driver);
  driver.insertAndClaim = async (row, claim) => {
    entered.resolve();
    await gate.promise;
    return real(row, claim);
  };
  let started = 0;
  pool.on("started", () => started++);
  await pool.start();
  const enqueued = pool.enqueueAction(job, 1);
  let enqueueSettled = false;
  void enqueued.then(() => (enqueueSettled = true));
  await entered.promise;
  // stop() begins while the enqueue, already entitled to claim, has not written yet.
  const stopped = pool.stop({ timeoutMs: 0 });
  gate.resolve();
  await stopped;
  // stop() waited for the enqueue, which resolves once the claimed attempt is handed back.
  expect(enqueueSettled).toBe(true);
  const id = await enqueued;
  expect(await pool.status(id)).toEqual({ state: "pending", previousAttempts: 0 });
  expect(started).toBe(0);
});

test("concurrent enqueues from two processes' started pools never start more than maxParallelism", async () => {
  const first = await setup(2);
  // A second store on the same schema stands for a second process.
  const second = postgresStore({ connectionString: DATABASE_URL, schema: first.schema });
  cleanups.push(() => second.close());
  const other = new Workpool(second, { name: "e", clock: first.clock, logger: quiet, maxParallelism: 2 });
  const gate = deferred();
  let active = 0;
  let peak = 0;
  const startedIds = new Set<string>();
  const allStarted = deferred();
  const blocking = async (c: { workId: string }) => {
    active++;
    peak = Math.max(peak, active);
    startedIds.add(c.workId);
    if (startedIds.size === 2) allStarted.resolve();
    await gate.promise;
    active--;
  };
  const blocks = [first.pool.defineAction("block", blocking), other.defineAction("block", blocking)] as const;
  await first.pool.start();
  await other.start();
  cleanups.push(
    () => first.pool.stop({ timeoutMs: 0 }),
    () => other.stop({ timeoutMs: 0 }),
  );
  const pools = [first.pool, other];
  const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => pools[i % 2]!.enqueueAction(blocks[i % 2]!, {})));
  await allStarted.promise;
  const statuses = await other.statusBatch(ids);
  expect(statuses.filter((s) => s.state === "running")).toHaveLength(2);
  expect(statuses.filter((s) => s.state === "pending")).toHaveLength(18);
  const finished = new Set<string>();
  const allDone = deferred();
  for (const p of pools) {
    p.on("completed", (e) => {
      finished.add(e.workId);
      if (finished.size === ids.length) allDone.resolve();
    });
  }
  gate.resolve();
  await allDone.promise;
  expect(peak).toBe(2);
});
