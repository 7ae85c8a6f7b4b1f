/**
 * Schema migrations for PostgreSQL: numbered DDL files in ./migrations, recorded in the
 * schema's `migrations` table, and one file per function in ./sql/functions, recorded by
 * hash in its `functions` table; applied in one transaction under an advisory lock so any
 * number of processes may start at once.
 */
import type { Pool, PoolClient } from "pg";
import { checkAppliedMigrations, loadMigrations, type AppliedMigration, type Migration } from "../../driver/migrations.js";
import { inTransaction } from "./connection.js";
import { functionsToApply, loadFunctionFiles, packageVersion, type AppliedFunction, type FunctionFile } from "./functions.js";
import { quoteIdent } from "./names.js";

const MIGRATIONS_DIR = new URL("./migrations/", import.meta.url);
const FUNCTIONS_DIR = new URL("./sql/functions/", import.meta.url);

/** The placeholder the SQL files use for the schema; replaced by the quoted name. */
const SCHEMA_PLACEHOLDER = ':"schema"';

/** What the migrator brings a schema to: the DDL migrations, the function files, and the version recorded with them. */
export interface PostgresSchemaSources {
  migrations: Migration[];
  functions: FunctionFile[];
  version: string;
}

let cached: PostgresSchemaSources | null = null;

/** The migrations and function files of this version of workpool. */
export function postgresSources(): PostgresSchemaSources {
  cached ??= { migrations: loadMigrations(MIGRATIONS_DIR), functions: loadFunctionFiles(FUNCTIONS_DIR), version: packageVersion() };
  return cached;
}

/** The migration files of this version of workpool. */
export function postgresMigrations(): Migration[] {
  return postgresSources().migrations;
}

/** The SQL of a migration or function file for `schema`. */
export function migrationSql(m: { sql: string }, schema: string): string {
  return m.sql.split(SCHEMA_PLACEHOLDER).join(quoteIdent(schema));
}

/** The rows of the schema's table `name`, none if the table (or the schema) is not there yet. */
async function rowsIfExists<R extends object>(db: Pool | PoolClient, schema: string, name: string, select: string): Promise<R[]> {
  const table = `${quoteIdent(schema)}.${name}`;
  const exists = await db.query<{ t: string | null }>("SELECT to_regclass($1) AS t", [table]);
  if (exists.rows[0]?.t == null) return [];
  return (await db.query<R & Record<string, unknown>>(`SELECT ${select} FROM ${table}`)).rows;
}

/**
 * What `schema` lacks: the version its migrations are at (after checking they are this
 * code's, see checkAppliedMigrations) and the function files to apply.
 */
async function pending(
  db: Pool | PoolClient,
  schema: string,
  src: PostgresSchemaSources,
): Promise<{ current: number; functions: FunctionFile[] }> {
  const migrations = await rowsIfExists<AppliedMigration>(db, schema, "migrations", "version, name");
  const current = checkAppliedMigrations(migrations, src.migrations);
  const applied = await rowsIfExists<AppliedFunction>(db, schema, "functions", "name, hash, version");
  return { current, functions: functionsToApply(src.functions, applied, src.version) };
}

/**
 * Brings `schema` up to date. A schema already current (migrations and function hashes)
 * is only read (no lock, no DDL), so processes whose role may not create tables still
 * start against a migrated database. Throws, changing nothing, if the schema is newer
 * than this code or was made by an unreleased development build (see checkAppliedMigrations).
 */
export async function migratePostgres(pool: Pool, schema: string, src: PostgresSchemaSources = postgresSources()): Promise<void> {
  const first = await pending(pool, schema, src);
  if (first.current === src.migrations.length && first.functions.length === 0) return;
  const s = quoteIdent(schema);
  await inTransaction(pool, async (client) => {
    // One migrator per schema at a time, across every process; the others wait here and
    // then find the work done. The lock is released at COMMIT or ROLLBACK.
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`workpool.migrate:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${s}.migrations (
      version    INTEGER PRIMARY KEY,
      name       TEXT NOT NULL,
      applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${s}.functions (
      name       TEXT PRIMARY KEY,
      hash       TEXT NOT NULL,
      version    TEXT NOT NULL,
      applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
    const { current, functions } = await pending(client, schema, src);
    // Functions first, then migrations: the baseline's trigger needs its function, and a
    // migration may use a function it ships with. Bodies are not checked at creation, so a
    // LANGUAGE sql function may read a table or column the migrations below create (plpgsql
    // is checked at first call anyway); signatures use built-in types only, which exist.
    await client.query("SET LOCAL check_function_bodies = off");
    for (const f of functions) {
      await client.query(migrationSql(f, schema));
      await client.query(
        `INSERT INTO ${s}.functions (name, hash, version) VALUES ($1, $2, $3)
         ON CONFLICT (name) DO UPDATE SET hash = excluded.hash, version = excluded.version, applied_at = now()`,
        [f.name, f.hash, src.version],
      );
    }
    for (const m of src.migrations) {
      if (m.version <= current) continue;
      await client.query(migrationSql(m, schema));
      await client.query(`INSERT INTO ${s}.migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
    }
  });
}
