/**
 * A worker process lives as long as its started pool: it keeps running with nothing
 * else to keep it alive (no pipes, no timers of its own), and exits by itself once
 * stopped (here on SIGTERM).
 */
import { afterEach, expect, test } from "vitest";
import { Workpool, type Status, type WorkId } from "../../src/index.js";
import { spawnChild } from "../helpers/child.js";
import { useTestStores } from "../helpers/stores.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});
const openTestStore = useTestStores();

/** Waits (bounded) for the child to finish `id`: the child has no pipe to tell us. */
async function waitFinished(pool: Workpool<unknown>, id: WorkId, exited: () => boolean): Promise<Status> {
  for (let i = 0; i < 500; i++) {
    const s = await pool.status(id);
    if (s.state === "finished" || exited()) return s;
    await new Promise((r) => setTimeout(r, 20));
  }
  return pool.status(id);
}

test("start() keeps a worker process alive; stop() lets it exit cleanly", async () => {
  const { store, path } = await openTestStore("sqlite");
  const pool = new Workpool(store, { name: "serve", logLevel: "ERROR" });
  const say = pool.defineAction("say", () => undefined);
  const first = await pool.enqueueAction(say, {});
  // Due only after the child has run out of other work: it must still be there.
  const later = await pool.enqueueAction(say, {}, { runAfter: 700 });
  const child = spawnChild("sqlite-child.mjs", [path, "serve"], { detachedIo: true });
  cleanups.push(() => child.proc.kill("SIGKILL"));
  let exitedEarly = false;
  void child.exited.then(() => (exitedEarly = true));
  expect((await waitFinished(pool as Workpool<unknown>, first, () => exitedEarly)).state).toBe("finished");
  expect(await waitFinished(pool as Workpool<unknown>, later, () => exitedEarly)).toEqual({
    state: "finished",
    result: { kind: "success" },
  });
  expect(exitedEarly).toBe(false);
  child.proc.kill("SIGTERM");
  expect(await child.exited).toBe(0);
  await store.close();
});
