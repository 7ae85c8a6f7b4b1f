/**
 * workpool/drizzle against the real databases: Drizzle's node-postgres driver on the
 * PostgreSQL test database, its better-sqlite3 driver on an SQLite file.
 */
import Database from "better-sqlite3";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { drizzle as drizzleSqlite } from "drizzle-orm/better-sqlite3";
import { pgSchema, text as pgText } from "drizzle-orm/pg-core";
import { sqliteTable, text as sqliteText } from "drizzle-orm/sqlite-core";
import pg from "pg";
import { describe, expect, test } from "vitest";
import { drizzleSqliteTx, drizzleTx } from "../../src/integrations/drizzle.js";
import { InvalidArgumentError, type WorkId } from "../../src/index.js";
import { DATABASE_URL, useCleanups, useSharedServer } from "../postgres/helpers.js";
import { Rollback, expectNoWork, expectWorkRuns, pgSetup, sqliteSetup } from "./helpers.js";

const cleanups = useCleanups();

describe("PostgreSQL (node-postgres driver)", () => {
  useSharedServer();

  async function setup() {
    const base = await pgSetup(cleanups);
    const client = new pg.Pool({ connectionString: DATABASE_URL, max: 3 });
    cleanups.push(() => client.end());
    const appRows = pgSchema(base.schema).table("app_rows", { k: pgText("k").primaryKey() });
    return { ...base, db: drizzlePg({ client }), table: appRows };
  }

  test("work enqueued in a transaction that rolls back does not exist", async () => {
    const { pool, ping, db, table, appRows } = await setup();
    let id: WorkId | undefined;
    await expect(
      db.transaction(async (tx) => {
        await tx.insert(table).values({ k: "a" });
        id = await pool.enqueueAction(ping, { n: 1 }, { tx: drizzleTx(tx) });
        throw new Rollback();
      }),
    ).rejects.toBeInstanceOf(Rollback);
    await expectNoWork(pool, id);
    expect(await appRows()).toEqual([]);
  });

  test("work enqueued in a transaction that commits exists and runs; batches too", async () => {
    const { pool, ping, db, table, appRows } = await setup();
    const [id, batch] = await db.transaction(async (tx) => {
      await tx.insert(table).values({ k: "a" });
      const one = await pool.enqueueAction(ping, { n: 2 }, { tx: drizzleTx(tx) });
      const many = await pool.enqueueActionBatch(ping, [{ n: 3 }, { n: 4 }], { tx: drizzleTx(tx) });
      return [one, many] as const;
    });
    expect(await appRows()).toEqual(["a"]);
    expect((await pool.statusBatch(batch)).map((s) => s.state)).toEqual(["pending", "pending"]);
    await expectWorkRuns(pool, id, { pong: 2 }, 3);
  });

  test("a mutation writes through Drizzle on ctx.tx, atomically with the work", async () => {
    const { pool, table, appRows } = await setup();
    const write = pool.defineMutation("write", async (ctx, k: string) => {
      await drizzlePg({ client: ctx.tx }).insert(table).values({ k });
      if (k === "bad") throw new Error("refused");
      return k;
    });
    const good = await pool.enqueueMutation(write, "good");
    const bad = await pool.enqueueMutation(write, "bad");
    await pool.runOnce();
    expect((await pool.status(good)).state).toBe("finished");
    expect(await pool.status(bad)).toMatchObject({ state: "finished", result: { kind: "failed" } });
    expect(await appRows()).toEqual(["good"]);
  });

  test("the Drizzle database itself (no transaction) is refused, naming tx", async () => {
    const { pool, ping, db } = await setup();
    expect(() => drizzleTx(db as never)).toThrow(InvalidArgumentError);
    await expect(pool.enqueueAction(ping, { n: 1 }, { tx: db as never })).rejects.toThrow(/tx/);
  });
});

describe("SQLite (better-sqlite3 driver)", () => {
  async function setup() {
    const base = await sqliteSetup(cleanups);
    const connection = new Database(base.path);
    connection.pragma("busy_timeout = 5000");
    cleanups.push(async () => void connection.close());
    const table = sqliteTable("app_rows", { k: sqliteText("k").primaryKey() });
    return { ...base, db: drizzleSqlite({ client: connection }), table };
  }

  test("work enqueued in a transaction that rolls back does not exist", async () => {
    const { pool, ping, db, table, appRows } = await setup();
    let id: Promise<WorkId> | undefined;
    expect(() =>
      db.transaction((tx) => {
        tx.insert(table).values({ k: "a" }).run();
        id = pool.enqueueAction(ping, { n: 1 }, { tx: drizzleSqliteTx(db) });
        throw new Rollback();
      }),
    ).toThrow(Rollback);
    await expectNoWork(pool, await id);
    expect(appRows()).toEqual([]);
  });

  test("work enqueued in a transaction that commits exists and runs", async () => {
    const { pool, ping, db, table, appRows } = await setup();
    const id = db.transaction((tx) => {
      tx.insert(table).values({ k: "a" }).run();
      return { id: pool.enqueueAction(ping, { n: 2 }, { tx: drizzleSqliteTx(db) }) };
    }).id;
    expect(appRows()).toEqual(["a"]);
    await expectWorkRuns(pool, await id, { pong: 2 });
  });

  test("a mutation writes through Drizzle on ctx.tx, atomically with the work", async () => {
    const { pool, table, appRows } = await setup();
    const write = pool.defineMutation("write", (ctx, k: string) => {
      drizzleSqlite({ client: ctx.tx }).insert(table).values({ k }).run();
      if (k === "bad") throw new Error("refused");
      return k;
    });
    const good = await pool.enqueueMutation(write, "good");
    const bad = await pool.enqueueMutation(write, "bad");
    await pool.runOnce();
    expect((await pool.status(good)).state).toBe("finished");
    expect(await pool.status(bad)).toMatchObject({ state: "finished", result: { kind: "failed" } });
    expect(appRows()).toEqual(["good"]);
  });

  test("a transaction's tx (not the database) and a connection outside a transaction are refused, naming tx", async () => {
    const { pool, ping, db } = await setup();
    expect(() => db.transaction((tx) => drizzleSqliteTx(tx as never))).toThrow(/pass db, not the transaction's tx/);
    expect(() => pool.enqueueAction(ping, { n: 1 }, { tx: drizzleSqliteTx(db) })).toThrow(InvalidArgumentError);
  });
});
