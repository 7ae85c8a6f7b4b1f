/**
 * postgresStore() options, ownership of connections, and closing.
 */
import { createServer, type AddressInfo, type Socket } from "node:net";
import pg from "pg";
import { expect, test } from "vitest";
import { quietLogger as quiet } from "../helpers/common.js";
import { openTestStore } from "../helpers/stores.js";
import { DRIVER } from "../../src/driver/driver.js";
import { InvalidArgumentError, Workpool } from "../../src/index.js";
import { postgresStore, type PostgresStoreOptions } from "../../src/drivers/postgres/index.js";
import { DATABASE_URL, adminQuery, appPool, dropSchema, randomSchema, urlWithApplicationName, useSharedServer } from "./helpers.js";

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
  const t = await openTestStore("postgres", { connections: "own", migrate: false });
  const { store } = t;
  try {
    const pool = new Workpool(store, { name: "tx", logger: quiet });
    const a = pool.defineAction("a", () => 1);
    await expect(pool.enqueueAction(a, {}, { tx: {} as pg.PoolClient })).rejects.toMatchObject({ field: "tx" });
    expect((await store[DRIVER].counts("tx", Date.now())).pending).toBe(0);
  } finally {
    await t.cleanup();
  }
});

test("a server that accepts connections and never answers fails the first call after connectTimeoutMs, clearly", async () => {
  const sockets: Socket[] = [];
  const silent = createServer((socket) => void sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const { port } = silent.address() as AddressInfo;
  const store = postgresStore({ connectionString: `postgres://nobody@127.0.0.1:${port}/none`, connectTimeoutMs: 200 });
  try {
    const pool = new Workpool(store, { logger: quiet });
    const a = pool.defineAction("a", () => 1);
    await expect(pool.enqueueAction(a, {})).rejects.toThrow(
      /could not reach PostgreSQL to open the store: .* \(a connection must open within 200 ms, the store's connectTimeoutMs option\)/,
    );
    expect(fieldOf({ connectionString: DATABASE_URL, connectTimeoutMs: 0 })).toBe("connectTimeoutMs");
  } finally {
    await store.close();
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => silent.close(resolve));
  }
});

test("after stop() and close(), the store leaves no session open on the server", async () => {
  const schema = randomSchema();
  const name = `wp_sessions_${schema}`;
  const store = postgresStore({ connectionString: urlWithApplicationName(name), schema });
  const pool = new Workpool(store, { logger: quiet, maxParallelism: 5 });
  const a = pool.defineAction("a", (_c, n: number) => n);
  const m = pool.defineMutation("m", (_c, n: number) => n);
  await pool.start();
  const done = new Promise<void>((resolve) => {
    let left = 20;
    pool.on("completed", () => void (--left === 0 && resolve()));
  });
  await pool.enqueueActionBatch(
    a,
    Array.from({ length: 10 }, (_, i) => i),
  );
  await pool.enqueueMutationBatch(
    m,
    Array.from({ length: 10 }, (_, i) => i),
  );
  await done;
  const open = () => adminQuery<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1", [name]);
  expect((await open())[0]!.n).toBeGreaterThan(0);
  await pool.stop();
  await store.close();
  // The server ends a session a moment after its client closes the socket.
  for (let i = 0; i < 100 && (await open())[0]!.n > 0; i++) await new Promise((r) => setTimeout(r, 20));
  expect((await open())[0]!.n).toBe(0);
  await dropSchema(schema);
});
