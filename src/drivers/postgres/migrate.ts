/**
 * Schema migrations for PostgreSQL: numbered files in ./migrations, recorded in the
 * schema's `migrations` table, applied in one transaction under an advisory lock so any
 * number of processes may start at once.
 */
import type { Pool, PoolClient } from "pg";
import { loadMigrations, schemaTooNewError, type Migration } from "../../driver/migrations.js";
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

/** Schema version recorded in the database, or 0 if the schema is not there yet. */
async function currentVersion(db: Pool | PoolClient, schema: string): Promise<number> {
  const table = `${quoteIdent(schema)}.migrations`;
  const exists = await db.query<{ t: string | null }>("SELECT to_regclass($1) AS t", [table]);
  if (exists.rows[0]?.t == null) return 0;
  const res = await db.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${table}`);
  return res.rows[0]?.v ?? 0;
}

/**
 * Brings `schema` up to date. A schema already current is only read (no lock, no DDL),
 * so processes whose role may not create tables still start against a migrated database.
 * Throws if the database's schema is newer than this code.
 */
export async function migratePostgres(pool: Pool, schema: string): Promise<void> {
  const migrations = postgresMigrations();
  const known = migrations.length;
  const seen = await currentVersion(pool, schema);
  if (seen > known) throw schemaTooNewError(seen, known);
  if (seen === known) return;
  await inTransaction(pool, async (client) => {
    // One migrator per schema at a time, across every process; the others wait here and
    // then find the work done. The lock is released at COMMIT or ROLLBACK.
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`workpool.migrate:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${quoteIdent(schema)}.migrations (
      version    INTEGER PRIMARY KEY,
      name       TEXT NOT NULL,
      applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
    const current = await currentVersion(client, schema);
    if (current > known) throw schemaTooNewError(current, known);
    for (const m of migrations) {
      if (m.version <= current) continue;
      await client.query(migrationSql(m, schema));
      await client.query(`INSERT INTO ${quoteIdent(schema)}.migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
    }
  });
}
