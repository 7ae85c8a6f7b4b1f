/**
 * A worker process killed with SIGKILL mid-attempt loses nothing: after leaseMs another
 * worker treats the attempt as failed ("worker lost") and retries it. A mutation that
 * was mid-transaction never committed, so running it again keeps it exactly-once.
 */
import { afterEach, expect, test } from "vitest";
import { ManualClock, Workpool } from "../../src/index.js";
import { spawnChild, type Child } from "../helpers/child.js";
import { useTestStores } from "../helpers/stores.js";
import { quietLogger as quiet } from "../helpers/common.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});
const openTestStore = useTestStores();

async function killMidAttempt(dbPath: string, workId: string): Promise<void> {
  const child: Child = spawnChild("sqlite-child.mjs", [dbPath, "hang"]);
  cleanups.push(() => child.proc.kill("SIGKILL"));
  await child.waitForLine(new RegExp(`^started ${workId} 1$`));
  child.proc.kill("SIGKILL");
  expect(await child.exited).toBe("SIGKILL");
}

test("an action whose worker was SIGKILLed is retried by another worker after the lease", async () => {
  const { store, path } = await openTestStore("sqlite");
  // Real time for the enqueue (the child uses the system clock for its lease).
  const clock = new ManualClock(Date.now());
  const pool = new Workpool(store, { name: "crash", leaseMs: 2000, clock, logger: quiet, random: () => 0.5 });
  const hang = pool.defineAction("hang", (ctx) => `recovered on attempt ${ctx.attempt}`);
  const id = await pool.enqueueAction(hang, {}, { retry: { maxAttempts: 3, initialBackoffMs: 1000, base: 2 } });
  await killMidAttempt(path, id);
  expect(await pool.status(id)).toEqual({ state: "running", previousAttempts: 0 });

  // Past the child's lease (2 s) and its maintenance leadership (5 s), by our clock.
  clock.set(Date.now() + 10_000);
  const r = await pool.runOnce();
  expect(r.rescued).toBe(1);
  expect(await pool.status(id)).toEqual({ state: "pending", previousAttempts: 1 });
  clock.advance(1000);
  await pool.runOnce();
  expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: "recovered on attempt 2" } });
  await store.close();
});

test("a mutation whose worker was SIGKILLed mid-transaction runs again, and its writes land exactly once", async () => {
  const { store, path } = await openTestStore("sqlite", { appTables: ["CREATE TABLE app_rows (k TEXT PRIMARY KEY)"] });
  const clock = new ManualClock(Date.now());
  const pool = new Workpool(store, { name: "crash", leaseMs: 2000, clock, logger: quiet });
  const m = pool.defineMutation("hang-mutation", (ctx, args: { k: string }) => {
    ctx.tx.prepare("INSERT INTO app_rows (k) VALUES (?)").run(args.k);
    return "committed";
  });
  const id = await pool.enqueueMutation(m, { k: "only-once" });
  await killMidAttempt(path, id);
  expect((store.db.prepare("SELECT count(*) AS n FROM app_rows").get() as { n: number }).n).toBe(0);

  clock.set(Date.now() + 10_000);
  expect((await pool.runOnce()).rescued).toBe(1);
  for (let i = 0; i < 3 && (await pool.status(id)).state !== "finished"; i++) {
    clock.advance(60_000);
    await pool.runOnce();
  }
  expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: "committed" } });
  expect((store.db.prepare("SELECT count(*) AS n FROM app_rows").get() as { n: number }).n).toBe(1);
  await store.close();
});
