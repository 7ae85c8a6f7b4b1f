/**
 * workpool/knex against the real databases: the `pg` client on the PostgreSQL test
 * database, the `better-sqlite3` client on an SQLite file.
 */
import knex, { type Knex } from "knex";
import { describe, expect, test } from "vitest";
import { knexTx } from "../../src/integrations/knex.js";
import { InvalidArgumentError, type WorkId } from "../../src/index.js";
import { DATABASE_URL, useCleanups, useSharedServer } from "../postgres/helpers.js";
import { Rollback, expectNoWork, expectWorkRuns, pgSetup, sqliteSetup, type Setup } from "./helpers.js";

const cleanups = useCleanups();

/** The same tests on both databases: `table(q)` names the app table on a query builder. */
function adapterTests<Tx>(setup: () => Promise<Setup<Tx> & { db: Knex; table: string; appRows(): Promise<string[]> | string[] }>) {
  test("work enqueued in a transaction that rolls back does not exist", async () => {
    const { pool, ping, db, table, appRows } = await setup();
    let id: WorkId | undefined;
    await expect(
      db.transaction(async (trx) => {
        await trx(table).insert({ k: "a" });
        id = await pool.enqueueAction(ping, { n: 1 }, { tx: knexTx(trx) });
        throw new Rollback();
      }),
    ).rejects.toBeInstanceOf(Rollback);
    await expectNoWork(pool, id);
    expect(await appRows()).toEqual([]);
  });

  test("work enqueued in a transaction that commits exists and runs; batches too", async () => {
    const { pool, ping, db, table, appRows } = await setup();
    const [id, batch] = await db.transaction(async (trx) => {
      await trx(table).insert({ k: "a" });
      const one = await pool.enqueueAction(ping, { n: 2 }, { tx: knexTx(trx) });
      const many = await pool.enqueueActionBatch(ping, [{ n: 3 }, { n: 4 }], { tx: knexTx(trx) });
      return [one, many] as const;
    });
    expect(await appRows()).toEqual(["a"]);
    expect((await pool.statusBatch(batch)).map((s) => s.state)).toEqual(["pending", "pending"]);
    await expectWorkRuns(pool, id, { pong: 2 }, 3);
  });

  test("a mutation writes through Knex on ctx.tx (.connection(ctx.tx)), atomically with the work", async () => {
    const { pool, db, table, appRows } = await setup();
    const write = pool.defineMutation("write", async (ctx, k: string) => {
      await db(table).insert({ k }).connection(ctx.tx);
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

  test("the knex instance (no transaction) and a finished transaction are refused, naming tx", async () => {
    const { pool, ping, db } = await setup();
    expect(() => knexTx(db as never)).toThrow(InvalidArgumentError);
    const trx = await db.transaction();
    await trx.commit();
    await expect(pool.enqueueAction(ping, { n: 1 }, { tx: knexTx(trx) })).rejects.toThrow(/already committed or rolled back/);
  });
}

describe("PostgreSQL (pg client)", () => {
  useSharedServer();
  adapterTests(async () => {
    const base = await pgSetup(cleanups);
    const db = knex({ client: "pg", connection: DATABASE_URL, pool: { min: 0, max: 3 } });
    cleanups.push(() => db.destroy());
    return { ...base, db, table: `${base.schema}.app_rows` };
  });
});

describe("SQLite (better-sqlite3 client)", () => {
  adapterTests(async () => {
    const base = await sqliteSetup(cleanups);
    const db = knex({ client: "better-sqlite3", connection: { filename: base.path }, useNullAsDefault: true });
    cleanups.push(() => db.destroy());
    return { ...base, db, table: "app_rows" };
  });
});
