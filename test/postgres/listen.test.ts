/**
 * LISTEN/NOTIFY wake-ups between stores (as between processes). Every worker here runs on
 * a ManualClock that never moves, so its safety poll and timers never fire: work only
 * starts because a notification woke the worker.
 */
import { expect, test } from "vitest";
import { DRIVER } from "../../src/driver/driver.js";
import { nextEvent } from "../helpers/common.js";
import { ManualClock, Workpool, type CompletedEvent } from "../../src/index.js";
import { postgresStore, type PostgresStore } from "../../src/drivers/postgres/index.js";
import type { PostgresDriver } from "../../src/drivers/postgres/driver.js";
import { DATABASE_URL, appPool, dropSchema, randomSchema, until, useCleanups, useSharedServer } from "./helpers.js";

useSharedServer();

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const cleanups = useCleanups();

/** Two stores on one fresh schema: `worker` runs work, `producer` enqueues it. */
async function twoStores(): Promise<{ schema: string; worker: PostgresStore; producer: PostgresStore; clock: ManualClock }> {
  const schema = randomSchema();
  const worker = postgresStore({ connectionString: DATABASE_URL, schema });
  const producer = postgresStore({ connectionString: DATABASE_URL, schema });
  cleanups.push(async () => {
    await worker.close();
    await producer.close();
    await dropSchema(schema);
  });
  await producer.migrate();
  return { schema, worker, producer, clock: new ManualClock(Date.UTC(2030, 0, 1)) };
}

function listenerOf(store: PostgresStore) {
  return (store[DRIVER] as PostgresDriver).listener;
}

/** The completed event of `workId`. */
function completed(pool: Workpool<unknown>, workId: string): Promise<CompletedEvent> {
  return nextEvent(pool, "completed", (e) => e.workId === workId);
}

async function startedWorker(store: PostgresStore, clock: ManualClock, options: { maxParallelism?: number } = {}) {
  const pool = new Workpool(store, { name: "n", clock, logger: quiet, ...options });
  pool.defineAction("job", (_c, n: number) => n * 2);
  await pool.start();
  cleanups.push(() => pool.stop({ timeoutMs: 0 }));
  await until(() => listenerOf(store).listening, "LISTEN");
  return pool;
}

test("work enqueued through another store starts at once, woken by NOTIFY", async () => {
  const { worker, producer, clock } = await twoStores();
  const pool = await startedWorker(worker, clock);
  const enqueuer = new Workpool(producer, { name: "n", clock, logger: quiet });
  const job = enqueuer.defineAction("job", (_c, n: number) => n);
  for (const n of [1, 2, 3]) {
    const id = await enqueuer.enqueueAction(job, n);
    const done = completed(pool as Workpool<unknown>, id);
    expect((await done).status).toBe("success");
    expect(await enqueuer.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: n * 2 } });
  }
});

test("enqueue with { tx } wakes workers when the caller's transaction commits", async () => {
  const { schema, worker, producer, clock } = await twoStores();
  const pool = await startedWorker(worker, clock);
  const enqueuer = new Workpool(producer, { name: "n", clock, logger: quiet });
  const job = enqueuer.defineAction("job", (_c, n: number) => n);
  const app = appPool(schema, 2);
  cleanups.push(() => app.end());
  const client = await app.connect();
  let id: string;
  try {
    await client.query("BEGIN");
    id = await enqueuer.enqueueAction(job, 21, { tx: client });
    // Not visible to anyone else before COMMIT.
    await expect(enqueuer.status(id)).rejects.toThrow(/no work with id/);
    const done = completed(pool as Workpool<unknown>, id);
    await client.query("COMMIT");
    expect((await done).status).toBe("success");
  } finally {
    client.release();
  }
  expect(await enqueuer.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: 42 } });
});

test("configure() in one process resumes a paused pool in another", async () => {
  const { worker, producer, clock } = await twoStores();
  const pool = await startedWorker(worker, clock, { maxParallelism: 0 });
  const admin = new Workpool(producer, { name: "n", clock, logger: quiet });
  const job = admin.defineAction("job", (_c, n: number) => n);
  const id = await admin.enqueueAction(job, 5);
  const done = completed(pool as Workpool<unknown>, id);
  // The worker was woken by the enqueue and found no free slot; it is still pending.
  await until(async () => (await worker[DRIVER].counts("n", clock.now())).pending === 1, "the enqueue");
  await admin.configure({ maxParallelism: 3 });
  expect((await done).status).toBe("success");
});

test("the LISTEN connection closes when the store's last worker stops, and reopens on start", async () => {
  const { worker, clock } = await twoStores();
  const listener = listenerOf(worker);
  const pool = await startedWorker(worker, clock);
  expect(listener.listening).toBe(true);
  await pool.stop();
  await until(() => !listener.listening, "LISTEN to close");
  await pool.start();
  await until(() => listener.listening, "LISTEN to reopen");
  expect(listener.connects).toBe(2);
});
