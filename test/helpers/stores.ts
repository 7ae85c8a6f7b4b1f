/**
 * The one way tests open a store: a fresh SQLite file in a temporary folder of its own, or
 * a fresh schema of the PostgreSQL test database, with what the suites need around it (the
 * application's connection, plain SQL, the arguments a child process opens it with) and a
 * `cleanup()` that closes the store and deletes the file or drops the schema.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3, { type Database } from "better-sqlite3";
import pg, { type PoolClient } from "pg";
import { afterEach } from "vitest";
import { sqliteStore, type SqliteStore } from "../../src/drivers/sqlite/index.js";
import { postgresStore, type PostgresStore } from "../../src/drivers/postgres/index.js";
import { appPool, DATABASE_URL, dropSchema, randomSchema } from "../postgres/helpers.js";

/** Which store a test opens. */
export type StoreKind = "sqlite" | "postgres";

/** How openTestStore() opens a store; every field is optional. */
export interface TestStoreOptions {
  /** Runs the store's migrate() before returning. Default true (an SQLite store migrates as it opens either way). */
  migrate?: boolean;
  /** Start of the temporary folder's name (SQLite) or of the schema's name (PostgreSQL), to tell a suite's leftovers apart. */
  prefix?: string;
  /**
   * PostgreSQL: "app" (default) hands the store the test's application pool ({ pool });
   * "own" lets the store open its own connections from the URL ({ connectionString }).
   */
  connections?: "app" | "own";
  /** PostgreSQL: the size of the application pool. Default 10. */
  appPoolSize?: number;
  /**
   * SQLite: the test opens the file itself with `synchronous = OFF` and hands the
   * connection to the store ({ database }), for suites that need speed, not durability.
   */
  unsynced?: boolean;
  /** SQL run with the application's connection once the store is ready: the application's tables. */
  appTables?: readonly string[];
  /** A list (see useCleanups) that gets this store's cleanup(). */
  cleanups?: (() => Promise<void>)[];
}

interface TestStoreBase {
  /** Runs statements (no rows back) with the application's connection. */
  exec(sql: string): Promise<void>;
  /** Runs one statement with the application's connection and returns its rows. */
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]>;
  /** The name plain SQL uses for one of the store's tables ("work", "pools", "workflow_runs", ...). */
  storeTable(name: string): string;
  /** The arguments the child fixtures (test/fixtures/*.mjs) take to open this store: kind, then location. */
  readonly childArgs: string[];
  /** Closes the store (and the test's own connections) and deletes the file or drops the schema. */
  cleanup(): Promise<void>;
}

/** A store on a fresh SQLite file. */
export interface SqliteTestStore extends TestStoreBase {
  readonly kind: "sqlite";
  readonly store: SqliteStore;
  /** The database file. */
  readonly path: string;
  /**
   * Runs `fn` inside db.transaction() on a new application connection to the file, then
   * commits, or rolls back when `rollback` is set. Resolves once the value `fn` returned
   * (enqueue's promise, which settles after the synchronous write) has settled.
   */
  inAppTransaction(fn: (tx: Database) => unknown, rollback: boolean): Promise<void>;
}

/** A store on a fresh PostgreSQL schema. */
export interface PostgresTestStore extends TestStoreBase {
  readonly kind: "postgres";
  readonly store: PostgresStore;
  readonly schema: string;
  /** The application's pool: its connections use the schema as search_path. */
  readonly app: pg.Pool;
  /** Runs `fn` inside BEGIN on a client of the application's pool, then commits, or rolls back when `rollback` is set or `fn` failed. */
  inAppTransaction(fn: (tx: PoolClient) => unknown, rollback: boolean): Promise<void>;
}

/** A fresh store of either kind. */
export type TestStore = SqliteTestStore | PostgresTestStore;

/** A new empty folder and a database path inside it; `remove()` deletes both (and the WAL files). */
export function tempDbPath(prefix = "workpool-test-"): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { path: join(dir, "test.db"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** See SqliteTestStore.inAppTransaction; `path` is the database file. */
export async function inSqliteAppTransaction(path: string, fn: (tx: Database) => unknown, rollback: boolean): Promise<void> {
  const app = new BetterSqlite3(path);
  app.pragma("busy_timeout = 5000");
  try {
    let returned: unknown;
    const run = app.transaction(() => {
      returned = fn(app);
      if (rollback) throw new Error("rollback");
    });
    try {
      run();
    } catch (e) {
      if (!rollback) throw e;
    }
    await returned;
  } finally {
    app.close();
  }
}

function openSqlite(options: TestStoreOptions): SqliteTestStore {
  const tmp = tempDbPath(options.prefix ?? "workpool-test-");
  let own: Database | null = null;
  if (options.unsynced) {
    own = new BetterSqlite3(tmp.path);
    own.pragma("journal_mode = WAL");
    own.pragma("synchronous = OFF");
  }
  const store = own ? sqliteStore({ database: own }) : sqliteStore({ filename: tmp.path });
  const query = async <R>(sql: string, params: unknown[] = []): Promise<R[]> => {
    const stmt = store.db.prepare(sql);
    if (stmt.reader) return stmt.all(...params) as R[];
    stmt.run(...params);
    return [];
  };
  for (const sql of options.appTables ?? []) store.db.exec(sql);
  return {
    kind: "sqlite",
    store,
    path: tmp.path,
    childArgs: ["sqlite", tmp.path],
    exec: async (sql) => void store.db.exec(sql),
    query,
    storeTable: (name) => `workpool_${name}`,
    inAppTransaction: (fn, rollback) => inSqliteAppTransaction(tmp.path, fn, rollback),
    async cleanup() {
      await store.close();
      own?.close();
      tmp.remove();
    },
  };
}

async function openPostgres(options: TestStoreOptions): Promise<PostgresTestStore> {
  const schema = randomSchema(options.prefix);
  const app = appPool(schema, options.appPoolSize);
  const store =
    options.connections === "own" ? postgresStore({ connectionString: DATABASE_URL, schema }) : postgresStore({ pool: app, schema });
  const t: PostgresTestStore = {
    kind: "postgres",
    store,
    schema,
    app,
    childArgs: ["postgres", DATABASE_URL, schema],
    exec: async (sql) => void (await app.query(sql)),
    query: async <R>(sql: string, params: unknown[] = []) => (await app.query(sql, params)).rows as R[],
    storeTable: (name) => `"${schema}".${name}`,
    async inAppTransaction(fn, rollback) {
      const client = await app.connect();
      try {
        await client.query("BEGIN");
        let failure: unknown = null;
        try {
          await fn(client);
        } catch (e) {
          failure = e;
        }
        await client.query(rollback || failure !== null ? "ROLLBACK" : "COMMIT");
        if (failure !== null) throw failure;
      } finally {
        client.release();
      }
    },
    async cleanup() {
      await store.close();
      await dropSchema(schema);
      await app.end();
    },
  };
  try {
    if (options.migrate !== false) await store.migrate();
    for (const sql of options.appTables ?? []) await app.query(sql);
  } catch (e) {
    await t.cleanup();
    throw e;
  }
  return t;
}

/** Opens a fresh, empty store of `kind` (own file or schema); the caller calls cleanup(), or passes `cleanups`. */
export async function openTestStore(kind: "sqlite", options?: TestStoreOptions): Promise<SqliteTestStore>;
export async function openTestStore(kind: "postgres", options?: TestStoreOptions): Promise<PostgresTestStore>;
export async function openTestStore(kind: StoreKind, options?: TestStoreOptions): Promise<TestStore>;
export async function openTestStore(kind: StoreKind, options: TestStoreOptions = {}): Promise<TestStore> {
  const t = kind === "sqlite" ? openSqlite(options) : await openPostgres(options);
  options.cleanups?.push(() => t.cleanup());
  return t;
}

/** openTestStore() for the tests of one file or describe block: every store it opened is cleaned up after each test. */
export function useTestStores(): typeof openTestStore {
  const live: TestStore[] = [];
  afterEach(async () => {
    for (const t of live.splice(0).reverse()) await t.cleanup();
  });
  return (async (kind: StoreKind, options?: TestStoreOptions) => {
    const t = await openTestStore(kind, options);
    live.push(t);
    return t;
  }) as typeof openTestStore;
}
