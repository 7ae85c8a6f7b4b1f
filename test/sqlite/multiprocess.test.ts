/**
 * Several worker processes sharing one SQLite file: the pool's maxParallelism holds
 * across all of them (measured independently by the handlers, in app tables), and the
 * work is shared between them.
 */
import BetterSqlite3 from "better-sqlite3";
import { afterEach, expect, test } from "vitest";
import { Workpool } from "../../src/index.js";
import { spawnChild, type Child } from "../helpers/child.js";
import { useTestStores } from "../helpers/stores.js";
import { quietLogger as quiet } from "../helpers/common.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});
const openTestStore = useTestStores();

test("three processes on one file never run more than maxParallelism at once", async () => {
  const { store, path } = await openTestStore("sqlite", {
    appTables: [
      "CREATE TABLE live (id TEXT PRIMARY KEY, pid INTEGER); CREATE TABLE peaks (id TEXT PRIMARY KEY, pid INTEGER, concurrent INTEGER)",
    ],
  });
  // Paused until every child is ready, so no child can take all the work alone.
  const admin = new Workpool(store, { name: "mp", maxParallelism: 0, logger: quiet });
  const hold = admin.defineAction("hold", () => 0);
  const ids = await admin.enqueueActionBatch(
    hold,
    Array.from({ length: 60 }, (_, i) => i),
  );
  await admin.runOnce();
  const children: Child[] = [0, 1, 2].map(() => spawnChild("sqlite-child.mjs", [path, "hold"]));
  cleanups.push(() => children.forEach((c) => c.proc.kill("SIGKILL")));
  await Promise.all(children.map((c) => c.waitForLine(/^ready$/)));
  await admin.configure({ maxParallelism: 4 });
  const codes = await Promise.all(children.map((c) => c.exited));
  expect(codes, children.map((c) => c.stderr()).join("\n")).toEqual([0, 0, 0]);

  const statuses = await admin.statusBatch(ids);
  expect(statuses.every((s) => s.state === "finished" && s.result?.kind === "success")).toBe(true);
  const db = new BetterSqlite3(path, { readonly: true });
  const peak = (db.prepare("SELECT max(concurrent) AS m FROM peaks").get() as { m: number }).m;
  const workers = (db.prepare("SELECT count(DISTINCT pid) AS n FROM peaks").get() as { n: number }).n;
  const runs = (db.prepare("SELECT count(*) AS n FROM peaks").get() as { n: number }).n;
  db.close();
  await store.close();
  expect(runs).toBe(60);
  expect(peak).toBeLessThanOrEqual(4);
  // The limit was actually exercised, by more than one process (each may run only 2).
  expect(peak).toBeGreaterThanOrEqual(3);
  expect(workers).toBeGreaterThanOrEqual(2);
});
