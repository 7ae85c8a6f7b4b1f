/**
 * Opens the store the command works on, from `--db` (or WORKPOOL_DB / DATABASE_URL): a
 * `postgres://` URL or an SQLite file. Only the database package that store needs is
 * loaded. Except for `migrate`, a database without workpool's schema is refused rather
 * than created, so a mistyped name creates nothing.
 */
import { existsSync } from "node:fs";
import { DRIVER, type Driver, type Store } from "../driver/driver.js";
import { errorText } from "../error-text.js";
import { CliError, EXIT } from "./exit-codes.js";

/** An open store and its driver. */
export interface OpenStore {
  store: Store<unknown>;
  driver: Driver<unknown>;
  /** How to name the store in messages. */
  label: string;
  /** The schema version the database recorded before the store was opened (0: none). */
  versionAtOpen: number;
}

/** The database the command should use: `--db`, else WORKPOOL_DB, else DATABASE_URL. */
export function resolveDb(given: string | undefined, env: NodeJS.ProcessEnv): string {
  const db = given ?? env.WORKPOOL_DB ?? env.DATABASE_URL;
  if (!db) throw new CliError("no database: pass --db <file.db | postgres://…>, or set WORKPOOL_DB or DATABASE_URL", EXIT.usage);
  return db;
}

/**
 * `e` as an "unreachable" exit when the driver says it is about reaching the database
 * (itself or its cause: a first connection's error wraps the network's); else `e`.
 */
export function unreachable(driver: Driver<unknown>, e: unknown): unknown {
  if (e instanceof CliError) return e;
  const cause = (e as { cause?: unknown } | null)?.cause;
  if (driver.isTransientError(e) || (cause !== undefined && driver.isTransientError(cause))) {
    return new CliError(`could not reach the store: ${errorText(e)}`, EXIT.unreachable);
  }
  return e;
}

/** PostgreSQL's SQLSTATE for a connection to a database the server does not have. */
const DATABASE_DOES_NOT_EXIST = "3D000";

/** The SQLSTATE of a PostgreSQL error, or of the error it wraps; undefined for any other error. */
function sqlState(e: unknown): unknown {
  const err = e as { code?: unknown; cause?: { code?: unknown } } | null;
  return err?.code ?? err?.cause?.code;
}

function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

/** The schema version an SQLite file records (0 when it has no workpool tables), read without changing it. */
async function sqliteVersion(path: string): Promise<number> {
  if (!existsSync(path)) return 0;
  const { default: Database } = await import("better-sqlite3");
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'workpool_migrations'").get();
    return table === undefined
      ? 0
      : (db.prepare("SELECT coalesce(max(version), 0) AS v FROM workpool_migrations").get() as { v: number }).v;
  } finally {
    db.close();
  }
}

/**
 * Opens the store at `db`. With `create` false (every command but `migrate`), a missing
 * SQLite file or a database without workpool's schema is a "not found" error.
 */
export async function openStore(db: string, schema: string, create: boolean): Promise<OpenStore> {
  const missing = (what: string): CliError =>
    new CliError(`${what}; check --db${isPostgresUrl(db) ? " and --schema" : ""}, or create it with \`workpool migrate\``, EXIT.notFound);
  if (isPostgresUrl(db)) {
    const { postgresStore } = await import("../drivers/postgres/index.js");
    const store = postgresStore({ connectionString: db, schema }) as unknown as Store<unknown>;
    const driver = store[DRIVER];
    let version: number;
    try {
      version = await driver.schemaVersion();
    } catch (e) {
      await store.close();
      if (sqlState(e) === DATABASE_DOES_NOT_EXIST) {
        throw new CliError(`${errorText(e)}; check --db (\`workpool migrate\` creates a schema, not a database)`, EXIT.notFound);
      }
      throw unreachable(driver, e);
    }
    if (version === 0 && !create) {
      await store.close();
      throw missing(`no workpool schema "${schema}" in this database`);
    }
    return { store, driver, label: `schema "${schema}"`, versionAtOpen: version };
  }
  if (!create && !existsSync(db)) throw missing(`no database file "${db}"`);
  // Read before the store opens the file: opening an SQLite store migrates it.
  const version = await sqliteVersion(db);
  if (version === 0 && !create) throw missing(`"${db}" has no workpool tables`);
  const { sqliteStore } = await import("../drivers/sqlite/index.js");
  const store = sqliteStore({ filename: db }) as unknown as Store<unknown>;
  return { store, driver: store[DRIVER], label: `"${db}"`, versionAtOpen: version };
}
