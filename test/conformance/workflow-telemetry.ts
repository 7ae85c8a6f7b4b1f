/**
 * Workflow traces with `workpool/opentelemetry`, recorded by the SDK's in-memory exporter:
 * one trace per run (its root span's context stored with the run), a span per advance,
 * child of the root and linked to the run's previous advance (across processes), a span
 * per step named after it, and the step's work traced inside the advance that started it.
 */
import { context, SpanStatusCode } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { hrTimeToMilliseconds } from "@opentelemetry/core";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { InvalidArgumentError, NonRetryableError, type Telemetry } from "../../src/index.js";
import { openTelemetry } from "../../src/integrations/opentelemetry.js";
import type { StoreHarness } from "./harness.js";
import { T0, useTestContext } from "./context.js";
import { drain, workflowPool } from "./workflow-kit.js";

export function defineWorkflowTelemetryTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("workflows: telemetry (OpenTelemetry)", () => {
    const ctx = useTestContext(harness);
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const app = provider.getTracer("app");
    beforeAll(() => void context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()));
    afterAll(() => context.disable());

    const finished = (): ReadableSpan[] => exporter.getFinishedSpans();
    const named = (prefix: string): ReadableSpan[] => finished().filter((s) => s.name.startsWith(prefix));
    const parentOf = (s: ReadableSpan): string | undefined => s.parentSpanContext?.spanId;
    const idOf = (s: ReadableSpan): string => s.spanContext().spanId;

    /** A process: a traced pool and its manager, defining the test's workflow. */
    function tracedProcess(t: Parameters<typeof workflowPool<Tx>>[0]) {
      const p = workflowPool(t, { name: "shop", telemetry: openTelemetry({ tracerProvider: provider }) });
      const reserve = p.pool.defineMutation("reserve", () => 1);
      const charge = p.pool.defineAction("charge", () => {
        t.clock.advance(1500);
        return "ch_1";
      });
      const email = p.pool.defineAction("email", () => {
        throw new NonRetryableError("mailbox full");
      });
      const flow = p.wf.define("order", async (step) => {
        await step.runMutation(reserve, null);
        const c = await step.runAction(charge, null);
        await step.awaitEvent("approved");
        const sent = await step.runAction(email, null).catch(() => "not sent");
        return { c, sent };
      });
      return { ...p, flow };
    }

    test("a run is one trace: its root span, its advances (children of the root), a span per step named after it, and its steps' work", async () => {
      exporter.reset();
      const t = await ctx();
      const { pool, wf, flow } = tracedProcess(t);
      let id = "";
      await app.startActiveSpan("request", async (request) => {
        id = await wf.start(flow, null);
        request.end();
      });
      await drain(pool);
      await app.startActiveSpan("approve", async (approve) => {
        await wf.sendEvent(id, "approved", null);
        approve.end();
      });
      await drain(pool);
      expect(await wf.status(id)).toMatchObject({ state: "success", result: { c: "ch_1", sent: "not sent" } });

      const [request] = named("request");
      const [approve] = named("approve");
      const [root] = named("workflow order");
      const traceId = request!.spanContext().traceId;
      // Every span of the run is in its trace, the advance the event's sender enqueued too.
      expect(finished().filter((s) => s.spanContext().traceId !== traceId)).toEqual([approve]);
      const resumed = named("enqueue shop").filter((s) => s.attributes["workpool.handler"] === "workpool:workflow.advance");
      expect(resumed.filter((s) => parentOf(s) === idOf(root!))).toHaveLength(2); // the start's and the event's
      // The root joins the trace of the code that started the run, and its context is stored with the run.
      expect(parentOf(root!)).toBe(idOf(request!));
      expect(root!.attributes).toMatchObject({
        "workpool.workflow.name": "order",
        "workpool.workflow.id": id,
        "messaging.destination.name": "shop",
      });
      const stored = JSON.parse((await t.driver.workflows().readRun(id))!.trace!) as { run: { traceparent: string } };
      expect(stored.run.traceparent).toBe(`00-${traceId}-${idOf(root!)}-01`);

      const steps = named("step ");
      expect(steps.map((s) => s.name)).toEqual(["step reserve", "step charge", "step approved", "step email"]);
      for (const s of steps) expect(parentOf(s)).toBe(idOf(root!));
      const charge = steps[1]!;
      expect(charge.attributes).toMatchObject({
        "workpool.workflow.step": 1,
        "workpool.workflow.step.kind": "action",
        "workpool.workflow.step.outcome": "success",
      });
      // A step's span covers it from its call to its outcome, on the pool's clock.
      expect(hrTimeToMilliseconds(charge.startTime)).toBe(T0);
      expect(hrTimeToMilliseconds(charge.duration)).toBe(1500);
      expect(steps[3]!.status).toEqual({ code: SpanStatusCode.ERROR, message: expect.stringContaining("mailbox full") });

      const advances = named("advance order");
      expect(advances.length).toBeGreaterThanOrEqual(3);
      for (const a of advances) expect(parentOf(a)).toBe(idOf(root!));
      // Each advance after the first links to the one before it.
      for (let i = 1; i < advances.length; i++) expect(advances[i]!.links.map((l) => l.context.spanId)).toEqual([idOf(advances[i - 1]!)]);
      expect(advances[0]!.links).toEqual([]);
      expect(advances.at(-1)!.attributes["workpool.workflow.advance.outcome"]).toBe("finished");
      // Each step's work is enqueued inside the advance that called the step; its attempt continues that trace.
      const enqueues = named("enqueue shop").filter((s) =>
        ["reserve", "charge", "email"].includes(String(s.attributes["workpool.handler"])),
      );
      expect(enqueues).toHaveLength(3);
      const advanceIds = new Set(advances.map(idOf));
      for (const e of enqueues) expect(advanceIds.has(parentOf(e)!)).toBe(true);
      const chargeWork = named("process shop").find((s) => s.attributes["workpool.handler"] === "charge")!;
      expect(enqueues.map(idOf)).toContain(parentOf(chargeWork));
    });

    test("an advance after a crash, in another process, replays and links to the run's last advance", async () => {
      exporter.reset();
      const t = await ctx();
      const first = tracedProcess(t);
      const id = await first.wf.start(first.flow, null);
      await drain(first.pool);
      expect(await first.wf.status(id)).toMatchObject({ state: "running" });
      const before = named("advance order");
      const last = before.at(-1)!;
      expect(last.attributes["workpool.workflow.advance.outcome"]).toBe("waiting");
      // The first process is gone; another one gets the event and drives the run on.
      const second = tracedProcess(t);
      await second.wf.sendEvent(id, "approved", null);
      await drain(second.pool);
      expect(await second.wf.status(id)).toMatchObject({ state: "success" });
      const replay = named("advance order").find(
        (a) => !before.includes(a) && a.attributes["workpool.workflow.advance.mode"] === "replayed",
      )!;
      expect(replay.links.map((l) => l.context.spanId)).toEqual([idOf(last)]);
      expect(replay.attributes).toMatchObject({ "workpool.workflow.replayed_entries": 3 });
      const [root] = named("workflow order");
      expect(parentOf(replay)).toBe(idOf(root!));
      expect(replay.spanContext().traceId).toBe(root!.spanContext().traceId);
      // The steps given before the crash are not traced again.
      expect(named("step ").map((s) => s.name)).toEqual(["step reserve", "step charge", "step approved", "step email"]);
    });

    test("without workflow hooks nothing is stored; a throwing hook never fails a run; a bad workflow option is refused", async () => {
      exporter.reset();
      const t = await ctx();
      const plain = workflowPool(t, { name: "plain" });
      const a = plain.pool.defineAction("a", () => 1);
      const flow = plain.wf.define("flow", async (step) => step.runAction(a, null));
      const id = await plain.wf.start(flow, null);
      await drain(plain.pool);
      expect(await plain.wf.status(id)).toMatchObject({ state: "success" });
      expect((await t.driver.workflows().readRun(id))!.trace).toBeNull();

      const warnings: string[] = [];
      const onWarning = (w: Error) => void warnings.push(w.message);
      process.on("warning", onWarning);
      try {
        const base = openTelemetry({ tracerProvider: provider });
        const broken: Telemetry = {
          ...base,
          workflow: {
            ...base.workflow!,
            advance: () => {
              throw new Error("tracer bug");
            },
          },
        };
        const p = workflowPool(t, { name: "broken", telemetry: broken });
        const b = p.pool.defineAction("b", () => 2);
        const f = p.wf.define("flow", async (step) => (await step.runAction(b, null)) + (await step.runAction(b, null)));
        const runId = await p.wf.start(f, null);
        await drain(p.pool);
        expect(await p.wf.status(runId)).toMatchObject({ state: "success", result: 4 });
        await new Promise((r) => setImmediate(r));
        expect(warnings.filter((w) => w.includes("workflows trace nothing more"))).toHaveLength(1);
      } finally {
        process.off("warning", onWarning);
      }
      const bad = { ...openTelemetry({ tracerProvider: provider }), workflow: { start: () => undefined } };
      expect(() => t.pool({ name: "bad", telemetry: bad as unknown as Telemetry })).toThrow(InvalidArgumentError);
      expect(() => t.pool({ name: "bad", telemetry: bad as unknown as Telemetry })).toThrow(/telemetry.*workflow/);
    });
  });
}
