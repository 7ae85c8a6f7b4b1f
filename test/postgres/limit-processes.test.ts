/**
 * Four worker processes on one PostgreSQL schema, one pool of maxParallelism 10: the
 * handlers count themselves in an app table (test/fixtures/limit-child.mjs), and the
 * highest count the database saw is exactly 10, never more.
 */
import { expect, test } from "vitest";
import { Workpool } from "../../src/index.js";
import { spawnChild, type Child } from "../helpers/child.js";
import { DATABASE_URL, adminQuery, freshStore, useCleanups, useSharedServer } from "./helpers.js";

useSharedServer();
const cleanups = useCleanups();

test("four processes never run more than maxParallelism 10 at once, and fill it", async () => {
  const { schema, store } = freshStore(cleanups);
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };
  // Paused until every child is ready, so no child can take the work alone.
  const admin = new Workpool(store, { name: "limit", maxParallelism: 0, logger: quiet });
  const gauge = admin.defineAction("gauge", () => 0);
  const ids = await admin.enqueueActionBatch(
    gauge,
    Array.from({ length: 300 }, (_, i) => i),
  );
  await admin.runOnce();
  await adminQuery(`CREATE TABLE "${schema}".gauge (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, peak INTEGER NOT NULL, target INTEGER NOT NULL);
    INSERT INTO "${schema}".gauge VALUES (1, 0, 0, 10)`);
  const children: Child[] = [0, 1, 2, 3].map(() => spawnChild("limit-child.mjs", ["postgres", DATABASE_URL, schema]));
  cleanups.push(async () => children.forEach((c) => c.proc.kill("SIGKILL")));
  await Promise.all(children.map((c) => c.waitForLine(/^ready$/)));
  await admin.configure({ maxParallelism: 10 });
  const codes = await Promise.all(children.map((c) => c.exited));
  expect(codes, children.map((c) => c.stderr()).join("\n")).toEqual([0, 0, 0, 0]);

  const statuses = await admin.statusBatch(ids);
  const pids = statuses.map((s) => (s.state === "finished" && s.result?.kind === "success" ? s.result.returnValue : null));
  expect(pids.filter((p) => p !== null)).toHaveLength(ids.length);
  const [row] = await adminQuery<{ n: number; peak: number }>(`SELECT n, peak FROM "${schema}".gauge`);
  expect(row).toEqual({ n: 0, peak: 10 });
  // Each process ran some of the work (none can run more than 3 at once).
  expect(new Set(pids).size).toBe(4);
});
