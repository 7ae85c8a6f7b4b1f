import { expect, test } from "vitest";
import { Workpool, ManualClock } from "../../src/index.js";
import { WorkflowManager } from "../../src/workflow/index.js";
import { sqliteStore } from "../../src/drivers/sqlite/index.js";
import { tempDbPath } from "../helpers/tmp.js";
import { quietLogger } from "../helpers/common.js";

test("a workflow runs its steps", async () => {
  const store = sqliteStore({ filename: tempDbPath().path });
  const clock = new ManualClock(Date.UTC(2030, 0, 1));
  const pool = new Workpool(store, { clock, logger: quietLogger });
  const wfs = new WorkflowManager(pool);
  const double = pool.defineAction("double", (_c, n: number) => n * 2);
  const add = pool.defineMutation("add", (_c, a: { x: number; y: number }) => a.x + a.y);
  const flow = wfs.define("flow", async (step, args: { n: number }) => {
    const a = await step.runAction(double, args.n);
    const [b, c] = await Promise.all([step.runAction(double, a), step.runMutation(add, { x: a, y: 1 })]);
    const t = step.now();
    const ev = await step.awaitEvent<{ ok: boolean }>("go", { timeoutMs: 1000 });
    return { a, b, c, t, ev };
  });
  const id = await wfs.start(flow, { n: 3 });
  for (let i = 0; i < 10; i++) await pool.runOnce();
  await wfs.sendEvent(id, "go", { ok: true });
  for (let i = 0; i < 5; i++) await pool.runOnce();
  console.log(await wfs.status(id));
  console.log(await wfs.steps(id));
  expect((await wfs.status(id)).state).toBe("success");
  await store.close();
});
