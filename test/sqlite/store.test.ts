/**
 * SQLite-specific behaviour of the store: options, a shared connection, schema versions.
 */
import { readFileSync } from "node:fs";
import BetterSqlite3 from "better-sqlite3";
import { afterEach, expect, test } from "vitest";
import { quietLogger as quiet, T0 } from "../helpers/common.js";
import { ManualClock, Workpool } from "../../src/index.js";
import { sqliteStore } from "../../src/drivers/sqlite/index.js";
import { tempDbPath } from "../helpers/stores.js";
import { loadMigrations } from "../../src/driver/migrations.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

test("options are validated with the field's name", () => {
  expect(() => sqliteStore({} as never)).toThrow(/filename: give exactly one of/);
  expect(() => sqliteStore({ filename: "" })).toThrow(/filename: must be a non-empty path/);
  expect(() => sqliteStore({ filename: "x.db", busyTimeoutMs: 0 })).toThrow(/busyTimeoutMs: must be an integer from 1/);
  expect(() => sqliteStore({ filename: "x.db", synchronous: "OFF" as never })).toThrow(/synchronous: must be "FULL" or "NORMAL"/);
  expect(() => sqliteStore(null as never)).toThrow(/options/);
  expect(() => sqliteStore({ database: { exec: () => undefined } as never })).toThrow(/database: must be an open better-sqlite3 Database/);
  const closed = new BetterSqlite3(":memory:");
  closed.close();
  expect(() => sqliteStore({ database: closed })).toThrow(/database: is a closed connection/);
  expect(() => sqliteStore({ filename: "x.db", busyTimeout: 5 } as never)).toThrow(/busyTimeout: is not an option of sqliteStore\(\)/);
});

test("a connection the store opens gets its pragmas; one passed in keeps its own", async () => {
  const tmp = tempDbPath();
  cleanups.push(() => tmp.remove());
  const store = sqliteStore({ filename: tmp.path, synchronous: "NORMAL", busyTimeoutMs: 1234 });
  const pragma = (name: string): unknown => store.db.pragma(name, { simple: true });
  // temp_store 2 is MEMORY, synchronous 1 is NORMAL.
  expect([pragma("journal_mode"), pragma("synchronous"), pragma("busy_timeout"), pragma("temp_store")]).toEqual(["wal", 1, 1234, 2]);
  await store.close();
  const own = new BetterSqlite3(tmp.path);
  const theirs = sqliteStore({ database: own });
  expect(own.pragma("temp_store", { simple: true })).toBe(0);
  await theirs.close();
  own.close();
});

test("the store's own connection works as { tx } inside the app's db.transaction()", async () => {
  const tmp = tempDbPath();
  cleanups.push(() => tmp.remove());
  const db = new BetterSqlite3(tmp.path);
  cleanups.push(() => db.close());
  db.exec("CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT)");
  const store = sqliteStore({ database: db });
  const pool = new Workpool(store, { logger: quiet });
  const ship = pool.defineAction("ship", (_c, args: { order: number }) => args.order);
  const placeOrder = db.transaction((item: string, fail: boolean) => {
    const { lastInsertRowid } = db.prepare("INSERT INTO orders (item) VALUES (?)").run(item);
    void pool.enqueueAction(ship, { order: Number(lastInsertRowid) }, { tx: db });
    if (fail) throw new Error("payment failed");
  });
  placeOrder("book", false);
  expect(() => placeOrder("lamp", true)).toThrow("payment failed");
  const pending = db.prepare("SELECT count(*) AS n FROM workpool_work WHERE state = 'pending'").get() as { n: number };
  expect(pending.n).toBe(1);
  expect((await pool.runOnce()).claimed).toBe(1);
  await store.close();
  expect(db.open).toBe(true); // a connection passed in is never closed by the store
});

test("a database with a newer schema than this code is refused with a clear error", () => {
  const tmp = tempDbPath();
  cleanups.push(() => tmp.remove());
  const store = sqliteStore({ filename: tmp.path });
  store.db.prepare("INSERT INTO workpool_migrations (version, name, applied_at) VALUES (99, '099_future', 0)").run();
  void store.close();
  const known = loadMigrations(new URL("../../src/drivers/sqlite/migrations/", import.meta.url)).length;
  expect(() => sqliteStore({ filename: tmp.path })).toThrow(
    `schema is at version 99, but this version of workpool knows only up to ${known}.`,
  );
});

/** The migration names that unreleased development builds recorded. */
const DEVELOPMENT_HISTORIES = [
  ["001_init"],
  ["001_baseline", "002_priorities_keys", "003_admin", "004_schedules_rate_limits", "005_work_meta"],
];

test.each(DEVELOPMENT_HISTORIES)(
  "a file made by an unreleased development build (%s, ...) is refused with a clear error, and nothing in it changes",
  (...names) => {
    const tmp = tempDbPath();
    cleanups.push(() => tmp.remove());
    // As development builds left it: their migrations recorded, the tables, one queued row.
    const old = new BetterSqlite3(tmp.path);
    old.exec("CREATE TABLE workpool_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
    old.exec(readFileSync(new URL("../../src/drivers/sqlite/migrations/001_schema.sql", import.meta.url), "utf8"));
    const record = old.prepare("INSERT INTO workpool_migrations (version, name, applied_at) VALUES (?, ?, 0)");
    names.forEach((name, i) => record.run(i + 1, name));
    old
      .prepare(
        "INSERT INTO workpool_work (id, pool, kind, fn_name, args, state, run_at, enqueued_at) VALUES ('w1', 'old', 'action', 'a', '1', 'pending', 0, 0)",
      )
      .run();
    old.close();
    const contents = () => {
      const db = new BetterSqlite3(tmp.path, { readonly: true });
      try {
        return {
          schema: db.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY name").all(),
          migrations: db.prepare("SELECT * FROM workpool_migrations").all(),
          work: db.prepare("SELECT * FROM workpool_work").all(),
        };
      } finally {
        db.close();
      }
    };
    const before = contents();
    expect(() => sqliteStore({ filename: tmp.path })).toThrow(
      `the database schema was created by an unreleased development build of workpool (it records migration 1 as ${names[0]}, where this version has 001_schema)`,
    );
    expect(() => sqliteStore({ filename: tmp.path })).toThrow(
      /Recreate it: drop workpool's schema \(PostgreSQL\) or its workpool_\* tables \(SQLite\)/,
    );
    expect(contents()).toEqual(before);
  },
);

test("opening the same file twice migrates once", async () => {
  const tmp = tempDbPath();
  cleanups.push(() => tmp.remove());
  const versions = loadMigrations(new URL("../../src/drivers/sqlite/migrations/", import.meta.url)).length;
  const a = sqliteStore({ filename: tmp.path });
  const b = sqliteStore({ filename: tmp.path });
  expect((a.db.prepare("SELECT count(*) AS n FROM workpool_migrations").get() as { n: number }).n).toBe(versions);
  await b.migrate();
  expect((a.db.prepare("SELECT count(*) AS n FROM workpool_migrations").get() as { n: number }).n).toBe(versions);
  await a.close();
  await b.close();
});

test("with { tx }, bad input throws synchronously so the caller's transaction rolls back", async () => {
  const tmp = tempDbPath();
  cleanups.push(() => tmp.remove());
  const db = new BetterSqlite3(tmp.path);
  cleanups.push(() => db.close());
  db.exec("CREATE TABLE orders (id INTEGER PRIMARY KEY)");
  const store = sqliteStore({ database: db });
  const pool = new Workpool(store, { logger: quiet });
  const a = pool.defineAction("a", () => 1);
  const place = db.transaction(() => {
    db.prepare("INSERT INTO orders DEFAULT VALUES").run();
    void pool.enqueueAction(a, { when: new Date() } as never, { tx: db });
  });
  expect(() => place()).toThrow(/args.when: a Date is not plain JSON/);
  expect((db.prepare("SELECT count(*) AS n FROM orders").get() as { n: number }).n).toBe(0);
  // Without tx the same mistake rejects the promise instead of throwing.
  const p = pool.enqueueAction(a, { when: new Date() } as never);
  await expect(p).rejects.toThrow(/args.when/);
  await store.close();
});

test("a { tx } connection to another database file is rejected", async () => {
  const tmp = tempDbPath();
  const other = tempDbPath();
  cleanups.push(
    () => tmp.remove(),
    () => other.remove(),
  );
  const store = sqliteStore({ filename: tmp.path });
  const wrong = new BetterSqlite3(other.path);
  const memory = new BetterSqlite3(":memory:");
  cleanups.push(
    () => wrong.close(),
    () => memory.close(),
  );
  const pool = new Workpool(store, { logger: quiet });
  const a = pool.defineAction("a", () => 1);
  expect(() => pool.enqueueAction(a, {}, { tx: wrong })).toThrow(/tx: is a connection to ".*", but this store uses/);
  expect(() => pool.enqueueAction(a, {}, { tx: memory })).toThrow(/tx: is a connection to an in-memory database/);
  const same = new BetterSqlite3(tmp.path);
  cleanups.push(() => same.close());
  let enqueued: Promise<string> | undefined;
  same.transaction(() => {
    enqueued = pool.enqueueAction(a, {}, { tx: same });
  })();
  await enqueued;
  await store.close();
});

test("async work a handler leaves behind does not slip into a later transaction", async () => {
  const tmp = tempDbPath();
  cleanups.push(() => tmp.remove());
  const store = sqliteStore({ filename: tmp.path });
  const pool = new Workpool(store, { logger: quiet });
  const a = pool.defineAction("a", () => 1);
  const order: string[] = [];
  let fireLeftover!: () => void;
  const leftoverFired = new Promise<void>((resolve) => (fireLeftover = resolve));
  let leftover: Promise<string> | undefined;
  const first = pool.defineMutation("first", () => {
    // Runs in this handler's async context, long after its transaction committed.
    void leftoverFired.then(() => {
      leftover = pool.enqueueAction(a, {}).then((id) => {
        order.push("leftover enqueue committed");
        return id;
      });
    });
  });
  let secondRunning!: () => void;
  const secondStarted = new Promise<void>((resolve) => (secondRunning = resolve));
  let releaseSecond!: () => void;
  const secondGate = new Promise<void>((resolve) => (releaseSecond = resolve));
  const second = pool.defineMutation("second", async () => {
    secondRunning();
    await secondGate;
    order.push("second mutation done");
  });
  await pool.enqueueMutation(first, {});
  await pool.runOnce();
  await pool.enqueueMutation(second, {});
  const step = pool.runOnce();
  await secondStarted;
  fireLeftover();
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  releaseSecond();
  await step;
  await leftover;
  // The leftover call waited for the open transaction instead of running inside it.
  expect(order).toEqual(["second mutation done", "leftover enqueue committed"]);
  await store.close();
});

test("a draining worker yields to the event loop between batches", async () => {
  const tmp = tempDbPath();
  cleanups.push(() => tmp.remove());
  const store = sqliteStore({ filename: tmp.path, synchronous: "NORMAL" });
  const pool = new Workpool(store, { logger: quiet, maxParallelism: 20, clock: new ManualClock(T0) });
  const noop = pool.defineAction("noop", () => null);
  await pool.enqueueActionBatch(
    noop,
    Array.from({ length: 2000 }, (_, i) => i),
  );
  let done = 0;
  const finished = new Promise<void>((resolve) => pool.on("completed", () => ++done === 2000 && resolve()));
  // Counts turns of the event loop (check phase) while the backlog drains.
  let turns = 0;
  let draining = true;
  const tick = (): void => {
    turns++;
    if (draining) setImmediate(tick);
  };
  setImmediate(tick);
  await pool.start();
  await finished;
  draining = false;
  await pool.stop();
  // 100 batches of 20: each batch boundary gives the loop a turn. Without yielding it got 1-3.
  expect(turns).toBeGreaterThanOrEqual(50);
  await store.close();
});
