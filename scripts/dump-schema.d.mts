// Types of dump-schema.mjs, for the snapshot tests.
import type { Database } from "better-sqlite3";

/** Where each store's snapshot is checked in. */
export declare const SNAPSHOT_FILES: { readonly postgres: string; readonly sqlite: string };

/** Normalises `pg_dump --schema-only` output of `schema` into the snapshot's text. */
export declare function normalisePgDump(text: string, schema: string): string;

/** Migrates a new schema with `migrate`, dumps it with pg_dump, drops it; returns the snapshot's text. */
export declare function dumpPostgresSchema(options: {
  connectionString: string;
  migrate: (schema: string) => Promise<void>;
  admin: (sql: string) => Promise<unknown>;
}): Promise<string>;

/** Migrates a new SQLite file with `migrate`; returns the snapshot's text from sqlite_master. */
export declare function dumpSqliteSchema(options: { migrate: (db: Database) => void }): string;
