/**
 * Patches on every store: step.patched(id) lets new code insert a step while runs started
 * by the old code replay without it; the choice is a journal marker, so each run takes the
 * same path on every replay; deprecatePatch(id) consumes the marker; replay stays checked
 * against the journal (a change without a patch, or a marker the code no longer expects,
 * blocks the run).
 */
import { describe, expect, test } from "vitest";
import { InvalidArgumentError } from "../../src/index.js";
import { workpoolAdmin } from "../../src/admin/index.js";
import type { WorkflowHandle } from "../../src/workflow/index.js";
import type { StoreHarness } from "./harness.js";
import { useTestContext } from "./context.js";
import { drain, workflowPool } from "./workflow-kit.js";

/** B waits this long before it runs: the runs are in flight between A and B when the code changes. */
const B_AFTER = 60_000;

export function defineWorkflowPatchTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("workflows: patches", () => {
    const ctx = useTestContext(harness);

    /** One deploy of the "order" workflow: `code` is v1 (A, B), v2 (A, C behind a patch, B) or v3 (the patch deprecated). */
    const deploy = (t: Awaited<ReturnType<typeof ctx>>, code: "v1" | "v2" | "v3" | "v2-unpatched" | "v3-unpatched", ran: string[]) => {
      const p = workflowPool(t);
      const [a, b, c] = ["a", "b", "c"].map((n) => p.pool.defineAction(n, () => void ran.push(`${code}:${n}`)));
      const flow: WorkflowHandle<null, string[]> = p.wf.define("order", async (step) => {
        const path: string[] = [];
        await step.runAction(a!, null);
        path.push("a");
        if (code === "v2" && step.patched("add-c")) {
          await step.runAction(c!, null);
          path.push("c");
        }
        if (code === "v3") step.deprecatePatch("add-c");
        if (code === "v3" || code === "v2-unpatched" || code === "v3-unpatched") {
          await step.runAction(c!, null);
          path.push("c");
        }
        await step.runAction(b!, null, { runAfter: B_AFTER });
        path.push("b");
        return path;
      });
      return { ...p, flow };
    };

    test("the worked example: v2 inserts a step behind patched(); the v1 run finishes without it, a new run takes it", async () => {
      const t = await ctx();
      const ran: string[] = [];
      const v1 = deploy(t, "v1", ran);
      const old = await v1.wf.start(v1.flow, null);
      await drain(v1.pool);
      expect((await v1.wf.steps(old)).map((s) => [s.kind, s.name, s.state])).toEqual([
        ["action", "a", "success"],
        ["action", "b", "running"],
      ]);

      // The deploy: v2 processes replace v1. The old run replays in one: patched() is false where its journal has B.
      const v2 = deploy(t, "v2", ran);
      const fresh = await v2.wf.start(v2.flow, null);
      t.clock.advance(B_AFTER);
      await drain(v2.pool);
      expect(await v2.wf.status(old)).toMatchObject({ state: "success", result: ["a", "b"] });
      expect((await v2.wf.steps(old)).map((s) => s.name)).toEqual(["a", "b"]);

      // The new run took the new step, after a marker entry that steps() shows.
      expect((await v2.wf.steps(fresh)).map((s) => [s.kind, s.name, s.state])).toEqual([
        ["action", "a", "success"],
        ["patch", "add-c", "success"],
        ["action", "c", "success"],
        ["action", "b", "running"],
      ]);
      // The admin API, with no workflow defined, shows the marker too.
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      expect((await admin.workflowSteps(fresh))?.[1]).toMatchObject({ n: 1, kind: "patch", name: "add-c", state: "success" });
      // Another v2 process replays it from the journal: the marker says patched() is true again.
      const v2b = deploy(t, "v2", ran);
      t.clock.advance(B_AFTER);
      await drain(v2b.pool);
      expect(await v2b.wf.status(fresh)).toMatchObject({ state: "success", result: ["a", "c", "b"] });
      expect(ran.filter((r) => r.endsWith(":c"))).toEqual(["v2:c"]);
      expect(ran.filter((r) => r.endsWith(":a"))).toEqual(["v1:a", "v2:a"]);
    });

    test("after deprecatePatch() a run with the marker and a run without it both replay", async () => {
      const t = await ctx();
      const ran: string[] = [];
      const v2 = deploy(t, "v2", ran);
      const marked = await v2.wf.start(v2.flow, null);
      await drain(v2.pool);
      expect((await v2.wf.steps(marked)).map((s) => s.kind)).toEqual(["action", "patch", "action", "action"]);

      // v3: the new path only; the marker of a run that took it is consumed, a new run journals none.
      const v3 = deploy(t, "v3", ran);
      const unmarked = await v3.wf.start(v3.flow, null);
      await drain(v3.pool);
      expect((await v3.wf.steps(unmarked)).map((s) => [s.kind, s.name])).toEqual([
        ["action", "a"],
        ["action", "c"],
        ["action", "b"],
      ]);
      // Both replay in a process that never ran them.
      const v3b = deploy(t, "v3", ran);
      t.clock.advance(B_AFTER);
      await drain(v3b.pool);
      expect(await v3b.wf.status(marked)).toMatchObject({ state: "success", result: ["a", "c", "b"] });
      expect(await v3b.wf.status(unmarked)).toMatchObject({ state: "success", result: ["a", "c", "b"] });
      expect(ran.filter((r) => r.endsWith(":c")).sort()).toEqual(["v2:c", "v3:c"]);
    });

    test("a change without a patch still blocks the run, as does a marker the code no longer expects", async () => {
      const t = await ctx();
      const ran: string[] = [];
      const v1 = deploy(t, "v1", ran);
      const old = await v1.wf.start(v1.flow, null);
      await drain(v1.pool);
      const v2 = deploy(t, "v2", ran);
      const marked = await v2.wf.start(v2.flow, null);
      await drain(v2.pool);

      // C inserted with no patch: the v1 run's journal has B where the code calls C.
      const unpatched = deploy(t, "v2-unpatched", ran);
      t.clock.advance(B_AFTER);
      await drain(unpatched.pool);
      expect(await unpatched.wf.status(old)).toMatchObject({
        state: "blocked",
        blocked: { n: 1, expected: { kind: "action", name: "c" }, recorded: { kind: "action", name: "b" } },
      });
      // The patch call removed while a run with its marker is in flight: the marker is checked, not skipped.
      expect(await unpatched.wf.status(marked)).toMatchObject({
        state: "blocked",
        blocked: { n: 1, expected: { kind: "action", name: "c" }, recorded: { kind: "patch", name: "add-c" } },
      });
      expect(ran.filter((r) => r.startsWith("v2-unpatched"))).toEqual(["v2-unpatched:b", "v2-unpatched:b"]);
    });

    test("patched() with another id where the journal has a marker is false and takes no position; the run goes on", async () => {
      const t = await ctx();
      const p = workflowPool(t);
      const a = p.pool.defineAction("a", () => "a");
      const flow = p.wf.define("flow", async (step) => {
        const seen = [step.patched("first"), step.patched("second")];
        await step.runAction(a, null);
        step.deprecatePatch("never-journaled");
        return seen;
      });
      const id = await p.wf.start(flow, null);
      await drain(p.pool);
      // A new run: both markers journaled, in call order; deprecatePatch() with no marker there journals nothing.
      expect((await p.wf.steps(id)).map((s) => [s.kind, s.name])).toEqual([
        ["patch", "first"],
        ["patch", "second"],
        ["action", "a"],
      ]);
      expect(await p.wf.status(id)).toMatchObject({ state: "success", result: [true, true] });

      // Another run, started by code with three patches, waits for an event.
      const later = workflowPool(t);
      const b = later.pool.defineAction("b", () => "b");
      const flow2 = later.wf.define("flow", async (step) => {
        const seen = [step.patched("third"), step.patched("first"), step.patched("second")];
        await step.awaitEvent("go");
        await step.runAction(b, null);
        return seen;
      });
      const id2 = await later.wf.start(flow2, null);
      await drain(later.pool);
      expect((await later.wf.steps(id2)).map((s) => s.name)).toEqual(["third", "first", "second", "go"]);
      // Code with a patch before them replays it: "zeta" meets the marker "third" there, so it is false and takes no position.
      const other = workflowPool(t);
      const b2 = other.pool.defineAction("b", () => "b");
      other.wf.define("flow", async (step) => {
        const seen = [step.patched("zeta"), step.patched("third"), step.patched("first"), step.patched("second")];
        await step.awaitEvent("go");
        await step.runAction(b2, null);
        return seen;
      });
      await other.wf.sendEvent(id2, "go", null);
      await drain(other.pool);
      expect(await other.wf.status(id2)).toMatchObject({ state: "success", result: [false, true, true, true] });
      expect((await other.wf.steps(id2)).map((s) => s.name)).toEqual(["third", "first", "second", "go", "b"]);
    });

    test("a bad patch id is refused in the function and journals nothing", async () => {
      const t = await ctx();
      const p = workflowPool(t);
      const errors: unknown[] = [];
      const flow = p.wf.define("flow", async (step) => {
        for (const bad of ["", "has space", "x".repeat(201), 7 as unknown as string]) {
          try {
            step.patched(bad);
          } catch (e) {
            errors.push(e);
          }
          try {
            step.deprecatePatch(bad);
          } catch (e) {
            errors.push(e);
          }
        }
        return step.patched("ok");
      });
      const id = await p.wf.start(flow, null);
      await drain(p.pool);
      expect(errors).toHaveLength(8);
      for (const e of errors) {
        expect(e).toBeInstanceOf(InvalidArgumentError);
        expect((e as Error).message).toMatch(/id.*1 to 200 characters/);
      }
      expect(await p.wf.status(id)).toMatchObject({ state: "success", result: true });
      expect((await p.wf.steps(id)).map((s) => [s.kind, s.name])).toEqual([["patch", "ok"]]);
    });
  });
}
