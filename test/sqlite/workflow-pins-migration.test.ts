/**
 * Migration 004 on SQLite rebuilds the workflow journal table to let it hold patch markers:
 * a file migrated from 003 keeps every journal entry, and takes the new kind afterwards.
 */
import BetterSqlite3 from "better-sqlite3";
import { afterEach, expect, test } from "vitest";
import { loadMigrations } from "../../src/driver/migrations.js";
import { migrateSqlite } from "../../src/drivers/sqlite/migrate.js";
import { tempDbPath } from "../helpers/stores.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

test("a file at migration 003 keeps its journal through 004, which then takes patch markers", () => {
  const tmp = tempDbPath();
  cleanups.push(() => tmp.remove());
  const migrations = loadMigrations(new URL("../../src/drivers/sqlite/migrations/", import.meta.url));
  const db = new BetterSqlite3(tmp.path);
  cleanups.push(() => db.close());
  db.exec("CREATE TABLE workpool_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
  for (const m of migrations.filter((m) => m.version <= 3)) {
    db.exec(m.sql);
    db.prepare("INSERT INTO workpool_migrations (version, name, applied_at) VALUES (?, ?, 0)").run(m.version, m.name);
  }
  db.exec(
    `INSERT INTO workpool_workflow_runs (id, pool, name, args, state, created_at, updated_at) VALUES ('r1', 'p', 'flow', 'null', 'running', 1, 1)`,
  );
  db.exec(`INSERT INTO workpool_workflow_steps (run_id, n, kind, name, state, args, outcome, work_id, child_id, delivered, started_at, finished_at)
    VALUES ('r1', 0, 'action', 'a', 'done', '1', '{"kind":"success","value":2}', 'w1', NULL, 1, 5, 6),
           ('r1', 1, 'value', 'now', 'done', NULL, '{"kind":"success","value":7}', NULL, NULL, 1, 6, 6),
           ('r1', 2, 'event', 'go', 'waiting', NULL, NULL, NULL, NULL, NULL, 7, NULL)`);
  const insertPatch = db.prepare(
    "INSERT INTO workpool_workflow_steps (run_id, n, kind, name, state, started_at, finished_at) VALUES ('r1', 3, 'patch', 'p1', 'done', 8, 8)",
  );
  expect(() => insertPatch.run()).toThrow(/CHECK constraint failed/);
  const before = db.prepare("SELECT * FROM workpool_workflow_steps ORDER BY run_id, n").all();

  migrateSqlite(db);

  expect(db.prepare("SELECT * FROM workpool_workflow_steps ORDER BY run_id, n").all()).toEqual(before);
  insertPatch.run();
  expect(() =>
    db.exec("INSERT INTO workpool_workflow_steps (run_id, n, kind, name, state, started_at) VALUES ('r1', 4, 'bogus', 'x', 'done', 9)"),
  ).toThrow(/CHECK constraint failed/);
  expect(db.prepare("SELECT version, pinned, parked_at FROM workpool_workflow_runs").get()).toEqual({
    version: null,
    pinned: 0,
    parked_at: null,
  });
  expect(db.prepare("SELECT max(version) AS v FROM workpool_migrations").get()).toEqual({ v: migrations.length });
});
