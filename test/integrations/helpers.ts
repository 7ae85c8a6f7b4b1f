/**
 * Shared set-up of the ORM adapter tests: a store and pool on a fresh PostgreSQL schema
 * or SQLite file, an action and a mutation to enqueue, and checks of what became of the
 * work. Every adapter is tested the same way: enqueue in the ORM's transaction and roll
 * it back (no work), or commit it (the work exists and runs).
 */
import type { Database } from "better-sqlite3";
import type { PoolClient } from "pg";
import { expect } from "vitest";
import { ManualClock, UnknownWorkError, Workpool, type ActionHandle, type Store, type WorkId } from "../../src/index.js";
import { CapturingLogger, T0 } from "../helpers/common.js";
import { adminQuery } from "../postgres/helpers.js";
import { openTestStore } from "../helpers/stores.js";

/** A pool with one action ("ping") and its store. */
export interface Setup<Tx> {
  pool: Workpool<Tx>;
  ping: ActionHandle<{ n: number }, { pong: number }>;
}

function withPing<Tx>(store: Store<Tx>): Setup<Tx> {
  const pool = new Workpool<Tx>(store, {
    name: "orm",
    clock: new ManualClock(T0),
    maxParallelism: 5,
    logger: new CapturingLogger(),
  });
  const ping = pool.defineAction("ping", (_ctx, args: { n: number }) => ({ pong: args.n }));
  return { pool, ping };
}

/** A PostgreSQL store on a new schema holding `app_rows (k TEXT PRIMARY KEY)`. */
export async function pgSetup(
  cleanups: (() => Promise<void>)[],
): Promise<Setup<PoolClient> & { schema: string; appRows(): Promise<string[]> }> {
  const { schema, store } = await openTestStore("postgres", { connections: "own", cleanups });
  await adminQuery(`CREATE TABLE "${schema}".app_rows (k TEXT PRIMARY KEY)`);
  const appRows = async () => (await adminQuery<{ k: string }>(`SELECT k FROM "${schema}".app_rows ORDER BY k`)).map((r) => r.k);
  return { ...withPing(store), schema, appRows };
}

/** An SQLite store on a new file holding `app_rows (k TEXT PRIMARY KEY)`; the ORM opens its own connection to `path`. */
export async function sqliteSetup(cleanups: (() => Promise<void>)[]): Promise<Setup<Database> & { path: string; appRows(): string[] }> {
  const { store, path } = await openTestStore("sqlite", {
    prefix: "workpool-orm-",
    appTables: ["CREATE TABLE app_rows (k TEXT PRIMARY KEY)"],
    cleanups,
  });
  const appRows = () => (store.db.prepare("SELECT k FROM app_rows ORDER BY k").all() as { k: string }[]).map((r) => r.k);
  return { ...withPing(store), path, appRows };
}

/** Checks that work rolled back with its transaction: unknown, and nothing to run. */
export async function expectNoWork<Tx>(pool: Workpool<Tx>, id: WorkId | undefined): Promise<void> {
  expect(id).toBeTypeOf("string");
  await expect(pool.status(id!)).rejects.toBeInstanceOf(UnknownWorkError);
  expect((await pool.runOnce()).claimed).toBe(0);
}

/** Checks that committed work exists, runs on runOnce() (with `pendingInAll` in the pool), and succeeds with `returnValue`. */
export async function expectWorkRuns<Tx>(
  pool: Workpool<Tx>,
  id: WorkId | undefined,
  returnValue: unknown,
  pendingInAll = 1,
): Promise<void> {
  expect(id).toBeTypeOf("string");
  expect((await pool.status(id!)).state).toBe("pending");
  expect((await pool.runOnce()).claimed).toBe(pendingInAll);
  expect(await pool.status(id!)).toEqual({ state: "finished", result: { kind: "success", returnValue } });
}

/** An error that rolls a test transaction back. */
export class Rollback extends Error {
  constructor() {
    super("roll back");
  }
}
