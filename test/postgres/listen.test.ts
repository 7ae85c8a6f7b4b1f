/**
 * LISTEN/NOTIFY wake-ups between stores (as between processes). Every worker here runs on
 * a ManualClock that never moves, so its safety poll and timers never fire: work only
 * starts because a notification woke the worker.
 */
import pg from "pg";
import { expect, test } from "vitest";
import { DRIVER } from "../../src/driver/driver.js";
import { deferred, nextEvent, quietLogger as quiet, T0 } from "../helpers/common.js";
import { ManualClock, Workpool, type CompletedEvent, type WorkId } from "../../src/index.js";
import { postgresStore, type PostgresStore } from "../../src/drivers/postgres/index.js";
import type { PostgresDriver } from "../../src/drivers/postgres/driver.js";
import { channelName, quoteIdent } from "../../src/drivers/postgres/names.js";
import { DATABASE_URL, appPool, until, useCleanups, useSharedServer } from "./helpers.js";
import { openTestStore } from "../helpers/stores.js";

useSharedServer();

const cleanups = useCleanups();

/** Two stores on one fresh schema: `worker` runs work, `producer` enqueues it. */
async function twoStores(): Promise<{ schema: string; worker: PostgresStore; producer: PostgresStore; clock: ManualClock }> {
  const { schema, store: producer } = await openTestStore("postgres", { connections: "own", cleanups });
  const worker = postgresStore({ connectionString: DATABASE_URL, schema });
  cleanups.push(() => worker.close());
  return { schema, worker, producer, clock: new ManualClock(T0) };
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

test("a batch enqueued through another store starts at once, woken by its NOTIFY", async () => {
  const { worker, producer, clock } = await twoStores();
  const pool = await startedWorker(worker, clock);
  const enqueuer = new Workpool(producer, { name: "n", clock, logger: quiet });
  const job = enqueuer.defineAction("job", (_c, n: number) => n);
  const ids = await enqueuer.enqueueActionBatch(job, [1, 2, 3]);
  const events = await Promise.all(ids.map((id) => completed(pool as Workpool<unknown>, id)));
  expect(events.map((e) => e.status)).toEqual(["success", "success", "success"]);
});

test("a burst of enqueues, most of them without their own NOTIFY, all start in the other store", async () => {
  const { worker, producer, clock } = await twoStores();
  const pool = await startedWorker(worker, clock, { maxParallelism: 100 });
  const enqueuer = new Workpool(producer, { name: "n", clock, logger: quiet });
  const job = enqueuer.defineAction("job", (_c, n: number) => n);
  const seen = new Set<string>();
  const all = deferred();
  const ids: WorkId[] = [];
  pool.on("completed", (e) => {
    seen.add(e.workId);
    if (ids.length === 20 && ids.every((id) => seen.has(id))) all.resolve();
  });
  // Back to back, one at a time: enqueues within a few ms of a notifying one commit
  // quietly; a trailing NOTIFY must still wake the worker for the last of them.
  for (let n = 0; n < 20; n++) ids.push(await enqueuer.enqueueAction(job, n));
  if (ids.every((id) => seen.has(id))) all.resolve();
  await all.promise;
  expect((await enqueuer.statusBatch(ids)).every((s) => s.state === "finished")).toBe(true);
});

test("an enqueue that commits without its own NOTIFY is followed by a trailing one", async () => {
  const { schema, producer, clock } = await twoStores();
  // A bare LISTEN session sees every NOTIFY on the channel, with no debouncing.
  const listener = new pg.Client({ connectionString: DATABASE_URL });
  await listener.connect();
  cleanups.push(() => listener.end());
  let heard = deferred<string | undefined>();
  listener.on("notification", (msg) => heard.resolve(msg.payload));
  await listener.query(`LISTEN ${quoteIdent(channelName(schema))}`);
  const enqueuer = new Workpool(producer, { name: "n", clock, logger: quiet });
  const job = enqueuer.defineAction("job", (_c, n: number) => n);
  await enqueuer.enqueueAction(job, 1);
  expect(await heard.promise).toBe("n");
  // From here on every enqueue of the producer counts as inside a coalescing window: its
  // statement sends nothing, so only the trailing notification can be heard.
  (producer[DRIVER] as PostgresDriver).notifier.notifyInline = () => null;
  heard = deferred();
  await enqueuer.enqueueAction(job, 2);
  expect(await heard.promise).toBe("n");
});

test("enqueue with { tx } wakes workers when the caller's transaction commits", async () => {
  const { schema, worker, producer, clock } = await twoStores();
  const pool = await startedWorker(worker, clock);
  const enqueuer = new Workpool(producer, { name: "n", clock, logger: quiet });
  const job = enqueuer.defineAction("job", (_c, n: number) => n);
  const app = appPool(schema, 2);
  cleanups.push(() => app.end());
  const client = await app.connect();
  let id: WorkId;
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
