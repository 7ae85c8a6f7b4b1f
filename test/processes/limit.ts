/**
 * Four worker processes on one store, one pool of maxParallelism 10: the handlers count
 * themselves in an app table (test/fixtures/limit-child.mjs), and the highest count the
 * database saw is exactly 10, never more.
 */
import { expect, test } from "vitest";
import { Workpool, type Store } from "../../src/index.js";
import { spawnChild, type Child } from "../helpers/child.js";
import { quietLogger } from "../helpers/common.js";
import { useTestStores, type StoreKind } from "../helpers/stores.js";

/** The four-process limit test on a store of `kind`. */
export function limitProcessesSuite(kind: StoreKind): void {
  const openTestStore = useTestStores();

  test("four processes never run more than maxParallelism 10 at once, and fill it", async () => {
    const t = await openTestStore(kind, kind === "postgres" ? { connections: "own" } : {});
    // The children's counter, an app table beside the store's (limit-child.mjs).
    const gaugeTable = t.kind === "postgres" ? `"${t.schema}".gauge` : "gauge";
    await t.exec(`CREATE TABLE ${gaugeTable} (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, peak INTEGER NOT NULL, target INTEGER NOT NULL)`);
    await t.exec(`INSERT INTO ${gaugeTable} VALUES (1, 0, 0, 10)`);
    const pids = t.kind === "sqlite" ? await drive(t.store, t.childArgs) : await drive(t.store, t.childArgs);
    const [row] = await t.query<{ n: number; peak: number }>(`SELECT n, peak FROM ${gaugeTable}`);
    expect(row).toEqual({ n: 0, peak: 10 });
    // Each process ran some of the work (none can run more than 3 at once).
    expect(new Set(pids).size).toBe(4);
  });
}

/** Enqueues 300 works on a paused pool, lets four children run them at maxParallelism 10, and returns what each work returned (its process's pid). */
async function drive<Tx>(store: Store<Tx>, childArgs: string[]): Promise<unknown[]> {
  // Paused until every child is ready, so no child can take the work alone.
  const admin = new Workpool(store, { name: "limit", maxParallelism: 0, logger: quietLogger });
  const gauge = admin.defineAction("gauge", () => 0);
  const ids = await admin.enqueueActionBatch(
    gauge,
    Array.from({ length: 300 }, (_, i) => i),
  );
  await admin.runOnce();
  const children: Child[] = [0, 1, 2, 3].map(() => spawnChild("limit-child.mjs", childArgs));
  try {
    await Promise.all(children.map((c) => c.waitForLine(/^ready$/)));
    await admin.configure({ maxParallelism: 10 });
    const codes = await Promise.all(children.map((c) => c.exited));
    expect(codes, children.map((c) => c.stderr()).join("\n")).toEqual([0, 0, 0, 0]);
  } finally {
    children.forEach((c) => c.proc.kill("SIGKILL"));
  }

  const statuses = await admin.statusBatch(ids);
  const pids = statuses.map((s) => (s.state === "finished" && s.result?.kind === "success" ? s.result.returnValue : null));
  expect(pids.filter((p) => p !== null)).toHaveLength(ids.length);
  return pids;
}
