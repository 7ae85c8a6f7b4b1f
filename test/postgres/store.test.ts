/**
 * postgresStore() options, ownership of connections, and closing.
 */
import pg from "pg";
import { expect, test } from "vitest";
import { quietLogger as quiet } from "../helpers/common.js";
import { DRIVER } from "../../src/driver/driver.js";
import { InvalidArgumentError, Workpool } from "../../src/index.js";
import { postgresStore, type PostgresStoreOptions } from "../../src/drivers/postgres/index.js";
import { DATABASE_URL, appPool, dropSchema, randomSchema, useSharedServer } from "./helpers.js";

useSharedServer();


function fieldOf(options: unknown): string {
  try {
    postgresStore(options as PostgresStoreOptions);
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidArgumentError);
    return (e as InvalidArgumentError).field;
  }
  throw new Error("expected postgresStore to throw");
}

test("bad options are rejected, naming the option, before anything connects", () => {
  expect(fieldOf(undefined)).toBe("options");
  expect(fieldOf({})).toBe("connectionString");
  expect(fieldOf({ connectionString: DATABASE_URL, pool: new pg.Pool() })).toBe("connectionString");
  expect(fieldOf({ connectionString: "" })).toBe("connectionString");
  expect(fieldOf({ pool: {} })).toBe("pool");
  expect(fieldOf({ connectionString: DATABASE_URL, schema: 'x"; DROP TABLE y; --' })).toBe("schema");
  expect(fieldOf({ connectionString: DATABASE_URL, schema: "1abc" })).toBe("schema");
  expect(fieldOf({ connectionString: DATABASE_URL, schema: "pg_catalog" })).toBe("schema");
  expect(fieldOf({ connectionString: DATABASE_URL, schema: "a".repeat(55) })).toBe("schema");
  expect(fieldOf({ connectionString: DATABASE_URL, pollIntervalMs: 0 })).toBe("pollIntervalMs");
  expect(fieldOf({ connectionString: DATABASE_URL, pollIntervalMs: 1.5 })).toBe("pollIntervalMs");
  const store = postgresStore({ connectionString: "postgres://nobody@127.0.0.1:1/none" });
  expect(store.schema).toBe("workpool");
  expect(store.dialect).toBe("postgres");
  return store.close();
});

test("a store given a pool never ends it; a closed store rejects further use", async () => {
  const schema = randomSchema();
  const app = appPool(schema);
  const store = postgresStore({ pool: app, schema });
  const pool = new Workpool(store, { name: "own", logger: quiet });
  const a = pool.defineAction("a", () => "ran");
  const id = await pool.enqueueAction(a, {});
  await pool.runOnce();
  expect(await pool.status(id)).toMatchObject({ state: "finished", result: { kind: "success", returnValue: "ran" } });
  await store.close();
  await store.close();
  expect((await app.query<{ one: number }>("SELECT 1 AS one")).rows[0]!.one).toBe(1);
  await expect(pool.status(id)).rejects.toThrow(/store is closed/);
  await expect(store.migrate()).rejects.toThrow(/store is closed/);
  await dropSchema(schema);
  await app.end();
});

test("{ tx } must be a pg client; a wrong value is rejected naming `tx` and writes nothing", async () => {
  const schema = randomSchema();
  const store = postgresStore({ connectionString: DATABASE_URL, schema });
  try {
    const pool = new Workpool(store, { name: "tx", logger: quiet });
    const a = pool.defineAction("a", () => 1);
    await expect(pool.enqueueAction(a, {}, { tx: {} as pg.PoolClient })).rejects.toMatchObject({ field: "tx" });
    expect((await store[DRIVER].counts("tx", Date.now())).pending).toBe(0);
  } finally {
    await store.close();
    await dropSchema(schema);
  }
});
