/**
 * Completion lanes on PostgreSQL: a started worker writes up to two batches of action
 * results at once (while one batch is in the database, the attempts the other claimed
 * run), and the global limit and exactly-once results still hold.
 */
import { expect, test } from "vitest";
import { DRIVER } from "../../src/driver/driver.js";
import type { PostgresDriver } from "../../src/drivers/postgres/driver.js";
import { ManualClock, Workpool } from "../../src/index.js";
import { deferred, T0, quietLogger } from "../helpers/common.js";
import { until, useCleanups, useSharedServer } from "./helpers.js";
import { openTestStore } from "../helpers/stores.js";

useSharedServer();
const cleanups = useCleanups();

test("a busy worker writes two completion batches at once, never more, and each result once", async () => {
  const { store } = await openTestStore("postgres", { connections: "own", migrate: false, cleanups });
  const maxParallelism = 40;
  const pool = new Workpool(store, { name: "l", clock: new ManualClock(T0), logger: quietLogger, maxParallelism });
  let running = 0;
  let peakRunning = 0;
  const job = pool.defineAction("job", async (_c, n: number) => {
    running++;
    peakRunning = Math.max(peakRunning, running);
    await Promise.resolve();
    running--;
    return n;
  });
  const ids = await pool.enqueueActionBatch(
    job,
    Array.from({ length: 200 }, (_, i) => i),
  );

  // Fault-injection style wrapper of the real driver's complete(): counts calls in flight,
  // and holds the first call until a second one has started (or a generous fallback
  // passes, so a single-lane completer fails the assertion below instead of hanging).
  const driver = store[DRIVER] as PostgresDriver;
  const complete = driver.complete.bind(driver);
  let inFlight = 0;
  let peakInFlight = 0;
  let calls = 0;
  const secondStarted = deferred();
  driver.complete = async (...args) => {
    calls++;
    inFlight++;
    peakInFlight = Math.max(peakInFlight, inFlight);
    if (calls === 2) secondStarted.resolve();
    try {
      if (calls === 1) await Promise.race([secondStarted.promise, new Promise((r) => setTimeout(r, 5000))]);
      return await complete(...args);
    } finally {
      inFlight--;
    }
  };

  const completed = new Map<string, number>();
  pool.on("completed", (e) => completed.set(e.workId, (completed.get(e.workId) ?? 0) + 1));
  await pool.start();
  cleanups.push(() => pool.stop({ timeoutMs: 0 }));
  await until(() => completed.size === ids.length, "every work to complete");

  expect(peakInFlight).toBe(2);
  expect(peakRunning).toBeLessThanOrEqual(maxParallelism);
  expect([...completed.values()].every((n) => n === 1)).toBe(true);
  const statuses = await pool.statusBatch(ids);
  expect(statuses.every((s) => s.state === "finished" && s.result?.kind === "success")).toBe(true);
  expect(await driver.readStats("l")).toMatchObject({ completed: 200, succeeded: 200 });
});
