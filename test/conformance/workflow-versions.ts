/**
 * Workflow versions on every store: a run records the version that started it; a pinned
 * run is driven only by processes that define its version (another process parks it
 * without running its function or burning attempts, and a process with the version takes
 * it over); an unpinned run is driven by whatever code is live; admin.workflowVersions()
 * shows which versions live processes define and which have runs no live process defines.
 */
import { describe, expect, test } from "vitest";
import { InvalidArgumentError } from "../../src/index.js";
import { workpoolAdmin } from "../../src/admin/index.js";
import type { StoreHarness } from "./harness.js";
import { useTestContext } from "./context.js";
import { drain, workflowPool } from "./workflow-kit.js";

export function defineWorkflowVersionTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("workflows: versions and pinning", () => {
    const ctx = useTestContext(harness);

    /** A process defining "flow" at `version`: it waits for "go", then returns what drove it. */
    const deploy = (t: Awaited<ReturnType<typeof ctx>>, version: string | undefined, pinVersion: boolean, ran: string[]) => {
      const p = workflowPool(t);
      const a = p.pool.defineAction("a", () => void ran.push(`${version}:a`));
      const flow = p.wf.define(
        "flow",
        async (step) => {
          ran.push(`${version}:fn`);
          await step.runAction(a, null);
          await step.awaitEvent("go");
          return version ?? null;
        },
        version === undefined ? {} : { version, pinVersion },
      );
      return { ...p, flow };
    };

    test("a pinned run is never driven by a process without its version; one with it takes it over", async () => {
      const t = await ctx();
      const ran: string[] = [];
      const v1 = deploy(t, "v1", true, ran);
      const id = await v1.wf.start(v1.flow, null);
      await drain(v1.pool);
      expect(ran).toEqual(["v1:fn", "v1:a"]);

      // Only v2 processes are left; the event's advance lands in one.
      const v2 = deploy(t, "v2", true, ran);
      await v2.wf.sendEvent(id, "go", null);
      expect(await drain(v2.pool)).toBe(1);
      expect(ran).toEqual(["v1:fn", "v1:a"]);
      expect(t.logger.matching(`workflow run ${id} is pinned to version v1 of "flow"`)).toHaveLength(1);
      expect(await v2.wf.status(id)).toMatchObject({ state: "running" });
      // The advance it took succeeded at its first attempt: nothing burned, nothing to retry.
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const advances = (await admin.list(v2.pool.name, { handler: "workpool:workflow.advance" })).items;
      expect(advances.map((w) => [w.state, w.resultKind, w.attempts])).toEqual([
        ["finished", "success", 1],
        ["finished", "success", 1],
      ]);
      // No busy loop: its later ticks claim nothing, however much time passes.
      t.clock.advance(120_000);
      expect(await drain(v2.pool)).toBe(0);
      expect(ran).toEqual(["v1:fn", "v1:a"]);

      // A v2 run of its own goes on in the v2 process.
      const own = await v2.wf.start(v2.flow, null);
      await v2.wf.sendEvent(own, "go", null);
      await drain(v2.pool);
      expect(await v2.wf.status(own)).toMatchObject({ state: "success", result: "v2" });

      // A process with v1 comes up: its maintenance tick picks the parked run up, and it finishes with v1's code.
      const v1again = deploy(t, "v1", true, ran);
      await drain(v1again.pool);
      expect(await v1again.wf.status(id)).toMatchObject({ state: "success", result: "v1", version: "v1" });
      expect(await v2.wf.status(own)).toMatchObject({ version: "v2" });
      expect(ran.filter((r) => r.startsWith("v1:"))).toEqual(["v1:fn", "v1:a", "v1:fn"]);
    });

    test("a step of a pinned run that finishes in a process without its version does not run the function there", async () => {
      const t = await ctx();
      const ran: string[] = [];
      const define = (version: string) => {
        const p = workflowPool(t);
        const later = p.pool.defineAction("later", () => void ran.push(`${version}:later`));
        const flow = p.wf.define(
          "slow",
          async (step) => {
            ran.push(`${version}:fn`);
            await step.runAction(later, null, { runAfter: 5_000 });
            return version;
          },
          { version, pinVersion: true },
        );
        return { ...p, flow };
      };
      const v1 = define("v1");
      const id = await v1.wf.start(v1.flow, null);
      await drain(v1.pool);
      // The step's work is ordinary work: a v2 process runs it, and its result reaches the journal there.
      const v2 = define("v2");
      t.clock.advance(5_000);
      await drain(v2.pool);
      expect(ran).toEqual(["v1:fn", "v2:later"]);
      expect((await v2.wf.steps(id)).map((s) => s.state)).toEqual(["success"]);
      expect(await v2.wf.status(id)).toMatchObject({ state: "running" });
      // The v1 process picks the parked run up, and goes on in memory where it left the function.
      await drain(v1.pool);
      expect(await v1.wf.status(id)).toMatchObject({ state: "success", result: "v1" });
      expect(ran).toEqual(["v1:fn", "v2:later"]);
    });

    test("a cancel of a pinned run is carried out by a process with its version: its function unwinds in its own code", async () => {
      const t = await ctx();
      const ran: string[] = [];
      const v1 = deploy(t, "v1", true, ran);
      const id = await v1.wf.start(v1.flow, null);
      await drain(v1.pool);
      const v2 = deploy(t, "v2", true, ran);
      expect(await v2.wf.cancel(id)).toBe(true);
      await drain(v2.pool);
      expect(await v2.wf.status(id)).toMatchObject({ state: "running", cancelRequested: true });
      const v1again = deploy(t, "v1", true, ran);
      await drain(v1again.pool);
      expect(await v1again.wf.status(id)).toMatchObject({ state: "canceled", cancelRequested: false });
      expect(ran).toEqual(["v1:fn", "v1:a", "v1:fn"]);
    });

    test("a cancel of a pinned run whose version no live process defines ends it as the cancel asked, its function not run", async () => {
      const t = await ctx();
      const ran: string[] = [];
      const v1 = deploy(t, "v1", true, ran);
      const id = await v1.wf.start(v1.flow, null, { onComplete: v1.pool.defineMutation("done", () => void ran.push("done")) });
      await drain(v1.pool);
      // The v1 process is gone: its heartbeat rows expire.
      t.clock.advance(120_000);
      const v2 = deploy(t, "v2", true, ran);
      v2.pool.defineMutation("done", () => void ran.push("v2:done"));
      expect(await v2.wf.cancel(id)).toBe(true);
      await drain(v2.pool);
      expect(await v2.wf.status(id)).toMatchObject({ state: "canceled", cancelRequested: false });
      expect((await v2.wf.steps(id)).map((s) => s.state)).toEqual(["success", "canceled"]);
      // The run's onComplete ran (in the v2 process, which defines it); its function did not.
      expect(ran).toEqual(["v1:fn", "v1:a", "v2:done"]);
      // A v1 process that comes back later has nothing left to do.
      const v1again = deploy(t, "v1", true, ran);
      await drain(v1again.pool);
      expect(ran).toEqual(["v1:fn", "v1:a", "v2:done"]);
    });

    test("an unpinned run of another version is driven by the code that is live", async () => {
      const t = await ctx();
      const ran: string[] = [];
      const v1 = deploy(t, "v1", false, ran);
      const id = await v1.wf.start(v1.flow, null);
      await drain(v1.pool);
      const v2 = deploy(t, "v2", false, ran);
      await v2.wf.sendEvent(id, "go", null);
      await drain(v2.pool);
      expect(await v2.wf.status(id)).toMatchObject({ state: "success", result: "v2" });
      expect(ran).toEqual(["v1:fn", "v1:a", "v2:fn"]);
    });

    test("workflowVersions(): versions live processes define, and unfinished runs of a version whose process is gone", async () => {
      const t = await ctx();
      const ran: string[] = [];
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const v1 = deploy(t, "v1", true, ran);
      await v1.wf.start(v1.flow, null);
      await v1.wf.start(v1.flow, null);
      await drain(v1.pool);
      const v2 = deploy(t, "v2", true, ran);
      await v2.pool.runOnce();
      const plain = deploy(t, undefined, false, ran);
      await plain.wf.start(plain.flow, null);
      await drain(plain.pool);
      const pool = v1.pool.name;
      const row = (version: string | null, over: object) => ({ pool, name: "flow", version, ...over });
      expect(await admin.workflowVersions(pool)).toEqual([
        row(null, { pinned: false, unfinishedRuns: 1, live: true, processes: 1 }),
        row("v1", { pinned: true, unfinishedRuns: 2, live: true, processes: 1 }),
        row("v2", { pinned: true, unfinishedRuns: 0, live: true, processes: 1 }),
      ]);

      // Each run records the version that started it.
      expect((await admin.workflows({ pool, version: "v1" })).items.map((r) => r.version)).toEqual(["v1", "v1"]);
      expect((await admin.workflows({ pool })).items.map((r) => r.version).sort()).toEqual([null, "v1", "v1"].sort());

      // The v1 and unversioned processes die (they stop ticking); the v2 one lives on.
      t.clock.advance(61_000);
      await v2.pool.runOnce();
      expect(await admin.workflowVersions(pool)).toEqual([
        row(null, { pinned: false, unfinishedRuns: 1, live: false, processes: 0 }),
        row("v1", { pinned: true, unfinishedRuns: 2, live: false, processes: 0 }),
        row("v2", { pinned: true, unfinishedRuns: 0, live: true, processes: 1 }),
      ]);
      // A second v2 process; every pool is listed without a pool name; another pool has none of these.
      await deploy(t, "v2", true, ran).pool.runOnce();
      expect((await admin.workflowVersions()).find((r) => r.version === "v2")).toMatchObject({ live: true, processes: 2 });
      expect(await admin.workflowVersions("some-other-pool")).toEqual([]);
      await expect(admin.workflowVersions("bad pool")).rejects.toThrow(InvalidArgumentError);

      // A pool that stops is no longer live at once: its rows go with it.
      const v3 = deploy(t, "v3", true, ran);
      await v3.pool.runOnce();
      expect((await admin.workflowVersions(pool)).map((r) => r.version)).toEqual([null, "v1", "v2", "v3"]);
      await v3.pool.start();
      await v3.pool.stop();
      expect((await admin.workflowVersions(pool)).map((r) => r.version)).toEqual([null, "v1", "v2"]);
    });

    test("define() refuses a bad version or pinVersion, naming the field", () => {
      return ctx().then((t) => {
        const { wf } = workflowPool(t);
        const fn = async () => null;
        const bad: [unknown, RegExp][] = [
          [{ version: "" }, /options\.version.*1 to 100 characters/],
          [{ version: "has space" }, /options\.version/],
          [{ version: "x".repeat(101) }, /options\.version/],
          [{ version: 2 }, /options\.version/],
          [{ pinVersion: true }, /options\.pinVersion.*needs options\.version/],
          [{ version: "v1", pinVersion: "yes" }, /options\.pinVersion.*true or false/],
          [{ version: "v1", pin: true }, /pin/],
        ];
        for (const [options, message] of bad) {
          expect(() => wf.define("flow", fn, options as never)).toThrow(InvalidArgumentError);
          expect(() => wf.define("flow", fn, options as never)).toThrow(message);
        }
        expect(wf.define("flow", fn, { version: "2024-06-01+build.7", pinVersion: true }).name).toBe("flow");
      });
    });
  });
}
