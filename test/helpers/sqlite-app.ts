/**
 * The application's side of a SQLite test: its own connection to the store's file, and a
 * transaction on it for `{ tx }` enqueue.
 */
import BetterSqlite3, { type Database } from "better-sqlite3";

/**
 * Runs `fn` inside db.transaction() on a new application connection to `path`, then
 * commits, or rolls back when `rollback` is set. Resolves once the value `fn` returned
 * (enqueue's promise, which settles after the synchronous write) has settled.
 */
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
