/**
 * workpool/kysely against the real databases: PostgresDialect on the PostgreSQL test
 * database, SqliteDialect (better-sqlite3) on an SQLite file.
 */
import Database from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect } from "kysely";
import pg from "pg";
import { describe, expect, test } from "vitest";
import { kyselyPool, kyselyTx } from "../../src/integrations/kysely.js";
import { InvalidArgumentError, type WorkId } from "../../src/index.js";
import { DATABASE_URL, useCleanups, useSharedServer } from "../postgres/helpers.js";
import { Rollback, expectNoWork, expectWorkRuns, pgSetup, sqliteSetup } from "./helpers.js";

interface DB {
  app_rows: { k: string };
}

const cleanups = useCleanups();

describe("PostgreSQL (PostgresDialect)", () => {
  useSharedServer();

  async function setup() {
    const base = await pgSetup(cleanups);
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: DATABASE_URL, max: 3 }) }) });
    cleanups.push(() => db.destroy());
    return { ...base, db: db.withSchema(base.schema) };
  }

  test("work enqueued in a transaction that rolls back does not exist", async () => {
    const { pool, ping, db, appRows } = await setup();
    let id: WorkId | undefined;
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.insertInto("app_rows").values({ k: "a" }).execute();
        id = await pool.enqueueAction(ping, { n: 1 }, { tx: kyselyTx(trx) });
        throw new Rollback();
      }),
    ).rejects.toBeInstanceOf(Rollback);
    await expectNoWork(pool, id);
    expect(await appRows()).toEqual([]);
  });

  test("work enqueued in a transaction that commits exists and runs; batches too", async () => {
    const { pool, ping, db, appRows } = await setup();
    const [id, batch] = await db.transaction().execute(async (trx) => {
      await trx.insertInto("app_rows").values({ k: "a" }).execute();
      const one = await pool.enqueueAction(ping, { n: 2 }, { tx: kyselyTx(trx) });
      const many = await pool.enqueueActionBatch(ping, [{ n: 3 }, { n: 4 }], { tx: kyselyTx(trx) });
      return [one, many] as const;
    });
    expect(await appRows()).toEqual(["a"]);
    expect((await pool.statusBatch(batch)).map((s) => s.state)).toEqual(["pending", "pending"]);
    await expectWorkRuns(pool, id, { pong: 2 }, 3);
  });

  test("a mutation writes through Kysely on ctx.tx, atomically with the work", async () => {
    const { pool, schema, appRows } = await setup();
    const write = pool.defineMutation("write", async (ctx, k: string) => {
      const onTx = new Kysely<DB>({ dialect: new PostgresDialect({ pool: kyselyPool(ctx.tx) }) }).withSchema(schema);
      await onTx.insertInto("app_rows").values({ k }).execute();
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

  test("the Kysely instance itself (no transaction) is refused, naming tx", async () => {
    const { db } = await setup();
    expect(() => kyselyTx(db as never)).toThrow(InvalidArgumentError);
  });
});

describe("SQLite (SqliteDialect)", () => {
  async function setup() {
    const base = await sqliteSetup(cleanups);
    const connection = new Database(base.path);
    connection.pragma("busy_timeout = 5000");
    const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: connection }) });
    cleanups.push(() => db.destroy());
    return { ...base, db };
  }

  test("work enqueued in a transaction that rolls back does not exist", async () => {
    const { pool, ping, db, appRows } = await setup();
    let id: WorkId | undefined;
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.insertInto("app_rows").values({ k: "a" }).execute();
        id = await pool.enqueueAction(ping, { n: 1 }, { tx: kyselyTx(trx) });
        throw new Rollback();
      }),
    ).rejects.toBeInstanceOf(Rollback);
    await expectNoWork(pool, id);
    expect(appRows()).toEqual([]);
  });

  test("work enqueued in a transaction that commits exists and runs; batches too", async () => {
    const { pool, ping, db, appRows } = await setup();
    const [id, batch] = await db.transaction().execute(async (trx) => {
      await trx.insertInto("app_rows").values({ k: "a" }).execute();
      const one = await pool.enqueueAction(ping, { n: 2 }, { tx: kyselyTx(trx) });
      const many = await pool.enqueueActionBatch(ping, [{ n: 3 }, { n: 4 }], { tx: kyselyTx(trx) });
      return [one, many] as const;
    });
    expect(appRows()).toEqual(["a"]);
    expect((await pool.statusBatch(batch)).map((s) => s.state)).toEqual(["pending", "pending"]);
    await expectWorkRuns(pool, id, { pong: 2 }, 3);
  });

  test("a mutation writes through Kysely on ctx.tx, atomically with the work", async () => {
    const { pool, appRows } = await setup();
    const write = pool.defineMutation("write", async (ctx, k: string) => {
      // Not destroyed: that would close the store's connection.
      const onTx = new Kysely<DB>({ dialect: new SqliteDialect({ database: ctx.tx }) });
      await onTx.insertInto("app_rows").values({ k }).execute();
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
});
