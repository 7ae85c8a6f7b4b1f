/**
 * Schema migrations for PostgreSQL: numbered files in ./migrations, recorded in the
 * schema's `migrations` table, applied in one transaction under an advisory lock so any
 * number of processes may start at once.
 */
import type { Pool, PoolClient } from "pg";
import { checkAppliedMigrations, loadMigrations, type AppliedMigration, type Migration } from "../../driver/migrations.js";
import { inTransaction } from "./connection.js";
import { quoteIdent } from "./names.js";

const MIGRATIONS_DIR = new URL("./migrations/", import.meta.url);

/** The placeholder migration files use for the schema; replaced by the quoted name. */
const SCHEMA_PLACEHOLDER = ':"schema"';

let cached: Migration[] | null = null;

/** The migration files of this version of workpool. */
export function postgresMigrations(): Migration[] {
  cached ??= loadMigrations(MIGRATIONS_DIR);
  return cached;
}

/** The SQL of a migration for `schema`. */
export function migrationSql(m: Migration, schema: string): string {
  return m.sql.split(SCHEMA_PLACEHOLDER).join(quoteIdent(schema));
}

/** The migrations recorded in the schema, none if the schema is not there yet. */
async function appliedMigrations(db: Pool | PoolClient, schema: string): Promise<AppliedMigration[]> {
  const table = `${quoteIdent(schema)}.migrations`;
  const exists = await db.query<{ t: string | null }>("SELECT to_regclass($1) AS t", [table]);
  if (exists.rows[0]?.t == null) return [];
  return (await db.query<AppliedMigration>(`SELECT version, name FROM ${table} ORDER BY version`)).rows;
}

/**
 * Brings `schema` up to date. A schema already current is only read (no lock, no DDL),
 * so processes whose role may not create tables still start against a migrated database.
 * Throws, changing nothing, if the schema is newer than this code or was made by an
 * unreleased development build (see checkAppliedMigrations).
 */
export async function migratePostgres(pool: Pool, schema: string): Promise<void> {
  const migrations = postgresMigrations();
  if (checkAppliedMigrations(await appliedMigrations(pool, schema), migrations) === migrations.length) return;
  await inTransaction(pool, async (client) => {
    // One migrator per schema at a time, across every process; the others wait here and
    // then find the work done. The lock is released at COMMIT or ROLLBACK.
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`workpool.migrate:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${quoteIdent(schema)}.migrations (
      version    INTEGER PRIMARY KEY,
      name       TEXT NOT NULL,
      applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
    const current = checkAppliedMigrations(await appliedMigrations(client, schema), migrations);
    for (const m of migrations) {
      if (m.version <= current) continue;
      await client.query(migrationSql(m, schema));
      await client.query(`INSERT INTO ${quoteIdent(schema)}.migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
    }
  });
}
