/**
 * step.map replayed on every store: another process carries on a run mid-map with no item
 * run twice; a fail-fast map's ended steps are ended again by the code where they were;
 * a step that ended on its own while a failing map ended it rolls that advance back.
 */
import { describe, expect, test } from "vitest";
import type { Workpool } from "../../src/index.js";
import type { WorkflowManager } from "../../src/workflow/index.js";
import { advance } from "../../src/workflow/advance.js";
import type { StoreHarness } from "./harness.js";
import { useTestContext, withDriver } from "./context.js";
import { drain, workflowPool } from "./workflow-kit.js";

export function defineWorkflowMapReplayTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("workflow map: replay", () => {
    const ctx = useTestContext(harness);

    test("a map replays in another process mid-map: no item runs twice, same result", async () => {
      const t = await ctx();
      const ran: number[] = [];
      let starts = 0;
      const define = (p: { pool: Workpool<Tx>; wf: WorkflowManager<Tx> }) => {
        const work = p.pool.defineAction("work", (_c, i: number) => {
          ran.push(i);
          return i * 10;
        });
        return p.wf.define("flow", async (step) => {
          starts++;
          const at = step.now();
          const values = await step.map(
            Array.from({ length: 12 }, (_, i) => i),
            async (i) => (await step.runAction(work, i)) + (await step.runAction(work, 100 + i)),
            { concurrency: 3 },
          );
          return { values, at };
        });
      };
      const first = workflowPool(t);
      const flow = define(first);
      const id = await first.wf.start(flow, null);
      await first.pool.runOnce();
      await first.pool.runOnce();
      await first.pool.runOnce();
      const midway = ran.length;
      expect(midway).toBeGreaterThan(0);
      expect(midway).toBeLessThan(24);
      expect(starts).toBe(1);
      // The first process is gone; another one (its own pool instance and manager) goes on.
      const second = workflowPool(t);
      define(second);
      await drain(second.pool);
      expect(starts).toBeGreaterThan(1);
      const values = Array.from({ length: 12 }, (_, i) => i * 10 + (100 + i) * 10);
      expect(await second.wf.status(id)).toMatchObject({ state: "success", result: { values } });
      expect([...ran].sort((a, b) => a - b)).toEqual([
        ...Array.from({ length: 12 }, (_, i) => i),
        ...Array.from({ length: 12 }, (_, i) => 100 + i),
      ]);
    });

    test("a fail-fast map replays in another process: the steps it ended end again where they did, nothing runs twice", async () => {
      const t = await ctx();
      const ran: string[] = [];
      let starts = 0;
      const define = (p: { pool: Workpool<Tx>; wf: WorkflowManager<Tx> }) => {
        const work = p.pool.defineAction("work", (_c, s: string) => void ran.push(s));
        const boom = p.pool.defineAction("boom", () => {
          ran.push("boom");
          throw new Error("broke");
        });
        const other = p.pool.defineAction("other", (_c, i: number) => void ran.push(`other ${i}`));
        return p.wf.define("flow", async (step) => {
          starts++;
          const items = [0, 1, 2, 3];
          const caught = await step
            .map(
              items,
              async (i) => {
                if (i === 1) return step.runAction(boom, null);
                if (i === 3) return step.runAction(other, i);
                try {
                  await step.sleep(60_000);
                } catch {
                  // An item the map ended: a step it calls from then on ends at once.
                  if (i === 2) await step.runAction(work, `compensate ${i}`).catch(() => undefined);
                  // It ends well, but after the map failed: no item starts in its place.
                  return "gave up";
                }
                return step.runAction(work, `after sleep ${i}`);
              },
              { concurrency: 3 },
            )
            .then(
              () => "no failure",
              (e: unknown) => (e as Error).message,
            );
          const ev = await step.awaitEvent<string>("go");
          return { caught, ev: ev.kind === "event" ? ev.value : "timeout" };
        });
      };
      const first = workflowPool(t);
      const flow = define(first);
      const id = await first.wf.start(flow, null);
      await drain(first.pool);
      expect(ran).toEqual(["boom"]);
      const steps = await first.wf.steps(id);
      expect(steps.map((s) => [s.n, s.kind, s.state])).toEqual([
        [0, "sleep", "canceled"],
        [1, "action", "failed"],
        [2, "sleep", "canceled"],
        [3, "action", "canceled"],
        [4, "event", "waiting"],
      ]);
      for (const n of [0, 2])
        expect(await first.pool.status(steps[n]!.workId!)).toMatchObject({ state: "finished", result: { kind: "canceled" } });
      const second = workflowPool(t);
      define(second);
      const before = starts;
      await second.wf.sendEvent(id, "go", "went");
      await drain(second.pool);
      expect(starts).toBe(before + 1);
      expect(await second.wf.status(id)).toMatchObject({ state: "success", result: { caught: "broke", ev: "went" } });
      t.clock.advance(60_000);
      await drain(second.pool);
      expect(ran).toEqual(["boom"]);
    });

    test("a step that ended on its own while a failing map ended it: nothing of that advance is written, it reads again and gives the step its outcome", async () => {
      const t = await ctx();
      let id = "";
      let armed = false;
      // Just before the advance commits, item 0's sleep ends (its work finished in another process).
      const store = withDriver(t.h.store, {
        async transaction(real, fn) {
          if (armed) {
            armed = false;
            await real.workflows().endStep(id, 0, "done", JSON.stringify({ kind: "success" }), t.clock.now());
          }
          return real.transaction(fn);
        },
      });
      const { pool, wf } = workflowPool(t, {}, store);
      const work = pool.defineAction("work", (_c, s: string) => s);
      const boom = pool.defineAction("boom", () => {
        throw new Error("broke");
      });
      const flow = wf.define("flow", async (step) => {
        const caught = await step
          .map([0, 1, 2], async (i) => {
            if (i === 1) return step.runAction(boom, null);
            try {
              await step.sleep(60_000);
              return "slept";
            } catch (e) {
              await step.runAction(work, `compensate ${i}`).catch(() => undefined);
              throw e;
            }
          })
          .catch((e: unknown) => (e as Error).message);
        await step.awaitEvent("go");
        return caught;
      });
      id = await wf.start(flow, null);
      await pool.runOnce(); // the first advance: two sleeps and the failing action
      wf.internals.executions.drop(id); // as in another process: the failure's outcome waits for an advance
      await pool.runOnce(); // the action fails
      armed = true;
      expect(await advance(wf.internals, id)).toMatchObject({ mode: "replayed" });
      // Item 0 got its sleep's outcome; only item 2 was ended (and its compensation at once).
      expect((await wf.steps(id)).map((s) => [s.n, s.kind, s.state, s.error])).toEqual([
        [0, "sleep", "success", undefined],
        [1, "action", "failed", "broke"],
        [2, "sleep", "canceled", "canceled: item 1 of its step.map failed"],
        [3, "action", "canceled", "canceled: item 1 of its step.map failed"],
        [4, "event", "waiting", undefined],
      ]);
      await wf.sendEvent(id, "go", null);
      await drain(pool);
      expect(await wf.status(id)).toMatchObject({ state: "success", result: "broke" });
    });
  });
}
