/**
 * A worker process lives as long as its started pool: it keeps running with nothing
 * else to keep it alive, and exits by itself once stopped (here on SIGTERM).
 */
import { afterEach, expect, test } from "vitest";
import { Workpool } from "../../src/index.js";
import { sqliteStore } from "../../src/drivers/sqlite/index.js";
import { spawnChild } from "../helpers/child.js";
import { tempDbPath } from "../helpers/tmp.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

test("start() keeps a worker process alive; stop() lets it exit cleanly", async () => {
  const tmp = tempDbPath();
  cleanups.push(() => tmp.remove());
  const store = sqliteStore({ filename: tmp.path });
  const pool = new Workpool(store, { name: "serve", logLevel: "ERROR" });
  const say = pool.defineAction("say", () => undefined);
  const child = spawnChild("sqlite-child.mjs", [tmp.path, "serve"]);
  cleanups.push(() => child.proc.kill("SIGKILL"));
  await child.waitForLine(/^ready$/);
  const id = await pool.enqueueAction(say, {});
  await child.waitForLine(new RegExp(`^ran ${id}$`));
  child.proc.kill("SIGTERM");
  expect(await child.exited).toBe(0);
  expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "success" } });
  await store.close();
});
