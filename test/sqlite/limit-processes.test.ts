/**
 * Four worker processes on one SQLite file, one pool of maxParallelism 10: the handlers
 * count themselves in an app table (test/fixtures/limit-child.mjs), and the highest count
 * the database saw is exactly 10, never more.
 */
import BetterSqlite3 from "better-sqlite3";
import { afterEach, expect, test } from "vitest";
import { Workpool } from "../../src/index.js";
import { sqliteStore } from "../../src/drivers/sqlite/index.js";
import { spawnChild, type Child } from "../helpers/child.js";
import { tempDbPath } from "../helpers/tmp.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

test("four processes never run more than maxParallelism 10 at once, and fill it", async () => {
  const tmp = tempDbPath();
  const store = sqliteStore({ filename: tmp.path });
  cleanups.push(() => tmp.remove());
  store.db.exec(
    "CREATE TABLE gauge (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, peak INTEGER NOT NULL, target INTEGER NOT NULL); INSERT INTO gauge VALUES (1, 0, 0, 10)",
  );
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };
  // Paused until every child is ready, so no child can take the work alone.
  const admin = new Workpool(store, { name: "limit", maxParallelism: 0, logger: quiet });
  const gauge = admin.defineAction("gauge", () => 0);
  const ids = await admin.enqueueActionBatch(
    gauge,
    Array.from({ length: 200 }, (_, i) => i),
  );
  await admin.runOnce();
  const children: Child[] = [0, 1, 2, 3].map(() => spawnChild("limit-child.mjs", ["sqlite", tmp.path]));
  cleanups.push(() => children.forEach((c) => c.proc.kill("SIGKILL")));
  await Promise.all(children.map((c) => c.waitForLine(/^ready$/)));
  await admin.configure({ maxParallelism: 10 });
  const codes = await Promise.all(children.map((c) => c.exited));
  expect(codes, children.map((c) => c.stderr()).join("\n")).toEqual([0, 0, 0, 0]);

  const statuses = await admin.statusBatch(ids);
  const pids = statuses.map((s) => (s.state === "finished" && s.result?.kind === "success" ? s.result.returnValue : null));
  expect(pids.filter((p) => p !== null)).toHaveLength(ids.length);
  const db = new BetterSqlite3(tmp.path, { readonly: true });
  const row = db.prepare("SELECT n, peak FROM gauge").get();
  db.close();
  await store.close();
  expect(row).toEqual({ n: 0, peak: 10 });
  // Each process ran some of the work (none can run more than 3 at once).
  expect(new Set(pids).size).toBe(4);
});
