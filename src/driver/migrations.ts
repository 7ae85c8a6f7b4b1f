/**
 * Reads a driver's numbered migration files (`001_schema.sql`, `002_....sql`) from its
 * `migrations/` folder, and checks the migrations a database records against them. Each
 * driver applies them in its own SQL, under its own lock.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** One migration file. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** A migration as a database's migrations table records it. */
export interface AppliedMigration {
  version: number;
  name: string;
}

/** Loads every `NNN_name.sql` in `dir` (a folder URL), sorted by version; checks numbering has no gaps. */
export function loadMigrations(dir: URL): Migration[] {
  const path = fileURLToPath(dir);
  const migrations = readdirSync(path)
    .filter((f) => /^\d+_[\w-]+\.sql$/.test(f))
    .map((file) => ({
      version: Number.parseInt(file, 10),
      name: file.replace(/\.sql$/, ""),
      sql: readFileSync(fileURLToPath(new URL(file, dir)), "utf8"),
    }))
    .sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`workpool: migration files in ${path} must be numbered 1..n without gaps; found ${m.name}`);
  });
  return migrations;
}

/**
 * The highest version a database records, after checking that every version this code
 * also has was recorded under the same name. Throws {@link developmentSchemaError} on a
 * mismatch (checked first: such a database may record more versions than the code has)
 * and {@link schemaTooNewError} when the database is ahead of the code.
 */
export function checkAppliedMigrations(applied: readonly AppliedMigration[], migrations: readonly Migration[]): number {
  const names = new Map(migrations.map((m) => [m.version, m.name]));
  for (const a of applied) {
    const expected = names.get(a.version);
    if (expected !== undefined && expected !== a.name) throw developmentSchemaError(a, expected);
  }
  const current = applied.reduce((max, a) => Math.max(max, a.version), 0);
  if (current > migrations.length) throw schemaTooNewError(current, migrations.length);
  return current;
}

/** The error for a database whose schema is newer than this code. */
export function schemaTooNewError(dbVersion: number, knownVersion: number): Error {
  return new Error(
    `workpool: the database schema is at version ${dbVersion}, but this version of workpool knows only up to ${knownVersion}. ` +
      "Upgrade workpool in this process; refusing to run against a newer schema.",
  );
}

/** The error for a database whose recorded migrations are not this code's: made by an unreleased development build. */
export function developmentSchemaError(found: AppliedMigration, expected: string): Error {
  return new Error(
    `workpool: the database schema was created by an unreleased development build of workpool ` +
      `(it records migration ${found.version} as ${found.name}, where this version has ${expected}), and no release can upgrade it. ` +
      "Recreate it: drop workpool's schema (PostgreSQL) or its workpool_* tables (SQLite), losing the work queued there, " +
      "and let workpool create them again. Refusing to run against it; nothing was changed.",
  );
}
