/**
 * Schema migrations for SQLite: numbered files in ./migrations, recorded in the
 * `workpool_migrations` table, applied under SQLite's write lock so any number of
 * processes may open the file at once.
 */
import type { Database } from "better-sqlite3";
import { checkAppliedMigrations, loadMigrations, type AppliedMigration } from "../../driver/migrations.js";

const MIGRATIONS_DIR = new URL("./migrations/", import.meta.url);

/**
 * Applies missing migrations synchronously, under SQLite's write lock (safe across
 * processes). Throws, changing nothing, if the file's schema is newer than this code or
 * was made by an unreleased development build (see checkAppliedMigrations).
 */
export function migrateSqlite(db: Database): void {
  const migrations = loadMigrations(MIGRATIONS_DIR);
  db.exec("BEGIN IMMEDIATE");
  try {
    db.exec(`CREATE TABLE IF NOT EXISTS workpool_migrations (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
    const applied = db.prepare("SELECT version, name FROM workpool_migrations ORDER BY version").all() as AppliedMigration[];
    const current = checkAppliedMigrations(applied, migrations);
    const record = db.prepare("INSERT INTO workpool_migrations (version, name, applied_at) VALUES (?, ?, ?)");
    for (const m of migrations) {
      if (m.version <= current) continue;
      db.exec(m.sql);
      record.run(m.version, m.name, Date.now());
    }
    db.exec("COMMIT");
  } catch (e) {
    if (db.inTransaction) db.exec("ROLLBACK");
    throw e;
  }
}
