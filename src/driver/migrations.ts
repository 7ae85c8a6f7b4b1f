/**
 * Reads a driver's numbered migration files (`001_init.sql`, `002_....sql`) from its
 * `migrations/` folder. Each driver applies them in its own SQL, under its own lock.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** One migration file. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
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

/** The error for a database whose schema is newer than this code. */
export function schemaTooNewError(dbVersion: number, knownVersion: number): Error {
  return new Error(
    `workpool: the database schema is at version ${dbVersion}, but this version of workpool knows only up to ${knownVersion}. ` +
      "Upgrade workpool in this process; refusing to run against a newer schema.",
  );
}
