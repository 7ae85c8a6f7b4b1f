/**
 * Tracing with `workpool/opentelemetry`, recorded by the OpenTelemetry SDK's in-memory
 * exporter: a PRODUCER span per enqueue call, a CONSUMER span per attempt that continues
 * the enqueuing trace from the context stored with the work, an INTERNAL span per
 * onComplete delivery; a cron tick's enqueue has its span too; messaging attributes; a
 * broken tracer never fails the work.
 */
import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { workpoolAdmin } from "../../src/admin/index.js";
import { NonRetryableError, type Telemetry } from "../../src/index.js";
import { openTelemetry } from "../../src/integrations/opentelemetry.js";
import type { StoreHarness } from "./harness.js";
import { T0, useTestContext, withDriver } from "./context.js";

export function defineTelemetryTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("telemetry (OpenTelemetry)", () => {
    const ctx = useTestContext(harness);
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const app = provider.getTracer("app");
    beforeAll(() => void context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()));
    afterAll(() => context.disable());

    async function traced(options?: { attemptsJoinTrace?: boolean }) {
      exporter.reset();
      const t = await ctx();
      const pool = t.pool({ name: "mail", telemetry: openTelemetry({ tracerProvider: provider, ...options }) });
      return { t, pool };
    }
    const spans = (name: string): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.name === name);
    const parentOf = (s: ReadableSpan): string | undefined => s.parentSpanContext?.spanId;

    test("an attempt's span is a child of the span that enqueued it, and the handler's spans are the attempt's", async () => {
      const { t, pool } = await traced();
      const send = pool.defineAction("send", async () => app.startActiveSpan("smtp", (s) => s.end()));
      let id = "";
      await app.startActiveSpan("request", async (request) => {
        id = await pool.enqueueAction(send, { to: "a" }, { priority: 3, key: "user:1" });
        request.end();
      });
      await pool.runOnce();
      const [request] = spans("request");
      const [enqueue] = spans("enqueue mail");
      const [attempt] = spans("process mail");
      const [smtp] = spans("smtp");
      expect(enqueue!.kind).toBe(SpanKind.PRODUCER);
      expect(parentOf(enqueue!)).toBe(request!.spanContext().spanId);
      expect(enqueue!.attributes).toMatchObject({
        "messaging.system": "workpool",
        "messaging.operation.type": "send",
        "messaging.destination.name": "mail",
        "messaging.message.id": id,
        "workpool.handler": "send",
      });
      expect(attempt!.kind).toBe(SpanKind.CONSUMER);
      expect(attempt!.spanContext().traceId).toBe(request!.spanContext().traceId);
      expect(parentOf(attempt!)).toBe(enqueue!.spanContext().spanId);
      expect(attempt!.links.map((l) => l.context.spanId)).toEqual([enqueue!.spanContext().spanId]);
      expect(attempt!.attributes).toMatchObject({
        "messaging.operation.type": "process",
        "messaging.message.id": id,
        "workpool.attempt": 1,
        "workpool.priority": 3,
        "workpool.key": "user:1",
        "workpool.attempt.outcome": "success",
      });
      expect(parentOf(smtp!)).toBe(attempt!.spanContext().spanId);
      const { traceId, spanId } = enqueue!.spanContext();
      expect((await workpoolAdmin(t.h.store, { clock: t.clock }).get(id))!.traceparent).toBe(`00-${traceId}-${spanId}-01`);
    });

    test("each attempt has its span: a failure that retries, then success; onComplete's span joins the trace", async () => {
      const { t, pool } = await traced();
      let calls = 0;
      const flaky = pool.defineAction("flaky", () => {
        if (++calls === 1) throw new TypeError("socket hang up");
        return "ok";
      });
      const done = pool.defineOnComplete("done", () => undefined);
      await pool.enqueueAction(flaky, {}, { retry: { maxAttempts: 2, initialBackoffMs: 10, base: 1 }, onComplete: done });
      await pool.runOnce();
      t.clock.advance(60_000);
      await pool.runOnce();
      await pool.runOnce();
      const [enqueue] = spans("enqueue mail");
      const attempts = spans("process mail");
      expect(attempts.map((s) => [s.attributes["workpool.attempt"], s.attributes["workpool.attempt.outcome"]])).toEqual([
        [1, "retrying"],
        [2, "success"],
      ]);
      expect(attempts.map(parentOf)).toEqual([enqueue!.spanContext().spanId, enqueue!.spanContext().spanId]);
      const failed = attempts[0]!;
      expect(failed.status).toEqual({ code: SpanStatusCode.ERROR, message: "socket hang up" });
      expect(failed.attributes["error.type"]).toBe("TypeError");
      expect(failed.events.map((e) => [e.name, e.attributes?.["exception.message"]])).toEqual([["exception", "socket hang up"]]);
      const [onComplete] = spans("onComplete mail");
      expect(onComplete!.kind).toBe(SpanKind.INTERNAL);
      expect(onComplete!.attributes).toMatchObject({ "workpool.handler": "done", "workpool.attempt.outcome": "success" });
      expect(parentOf(onComplete!)).toBe(enqueue!.spanContext().spanId);
    });

    test("a batch is one enqueue span; a mutation and a failure for good have theirs; attemptsJoinTrace false links only", async () => {
      const { pool } = await traced({ attemptsJoinTrace: false });
      const m = pool.defineMutation("m", () => 1);
      const bad = pool.defineAction("bad", () => {
        throw new NonRetryableError("no such user");
      });
      await pool.enqueueMutationBatch(m, [{}, {}, {}]);
      await pool.enqueueAction(bad, {});
      await pool.runOnce();
      const [batch, single] = spans("enqueue mail");
      expect(batch!.attributes).toMatchObject({ "messaging.batch.message_count": 3, "workpool.work.kind": "mutation" });
      expect(batch!.attributes).not.toHaveProperty("messaging.message.id");
      const attempts = spans("process mail");
      expect(attempts).toHaveLength(4);
      for (const a of attempts) {
        const enqueuedBy = a.attributes["workpool.work.kind"] === "mutation" ? batch! : single!;
        // Its own trace, linked to the enqueue.
        expect(a.parentSpanContext).toBeUndefined();
        expect(a.spanContext().traceId).not.toBe(enqueuedBy.spanContext().traceId);
        expect(a.links.map((l) => l.context.spanId)).toEqual([enqueuedBy.spanContext().spanId]);
      }
      const failed = attempts.find((a) => a.attributes["workpool.handler"] === "bad")!;
      expect(failed.attributes).toMatchObject({ "workpool.attempt.outcome": "failed", "error.type": "NonRetryableError" });
      expect(attempts.filter((a) => a.attributes["workpool.attempt.outcome"] === "success")).toHaveLength(3);
    });

    test("a cron tick is enqueued in a span of its own, its attempt's parent; a worker that lost the tick ends its span with no work id", async () => {
      const { t, pool } = await traced();
      const seen: (number | null)[] = [];
      const job = pool.defineAction("job", (c) => void seen.push(c.scheduledAt));
      await pool.schedule("every-second", { cron: "* * * * * *" }, job, {});
      t.clock.advance(1000);
      await pool.runOnce();
      const [info] = await pool.schedules();
      const [enqueue] = spans("enqueue mail");
      const [attempt] = spans("process mail");
      expect(spans("enqueue mail")).toHaveLength(1);
      expect(enqueue!.kind).toBe(SpanKind.PRODUCER);
      // The schedule loop runs on a timer, outside any span of the app: a trace of its own.
      expect(enqueue!.parentSpanContext).toBeUndefined();
      expect(enqueue!.attributes).toMatchObject({
        "messaging.operation.type": "send",
        "messaging.destination.name": "mail",
        "messaging.message.id": info!.lastWorkId!,
        "workpool.handler": "job",
        "workpool.work.kind": "action",
      });
      expect(parentOf(attempt!)).toBe(enqueue!.spanContext().spanId);
      expect(attempt!.attributes["messaging.message.id"]).toBe(info!.lastWorkId);
      // The trace context joins the tick in the work's meta: the handler still reads its tick.
      expect(seen).toEqual([T0 + 1000]);

      // Two workers read the due schedule; the first applies the step, the second's is refused.
      exporter.reset();
      const first = t.pool({ name: "race", maxParallelism: 0, telemetry: openTelemetry({ tracerProvider: provider }) });
      const pass = (p: unknown) => (p as { worker: { scheduler: { tick(): Promise<unknown> } } }).worker.scheduler.tick();
      let overtaken = false;
      const stale = withDriver(t.h.store, {
        dueSchedules: async (real, name, now, limit) => {
          const read = await real.dueSchedules(name, now, limit);
          if (!overtaken && read.due.length) {
            overtaken = true;
            await pass(first);
          }
          return read;
        },
      });
      const second = t.pool({ name: "race", maxParallelism: 0, telemetry: openTelemetry({ tracerProvider: provider }) }, stale);
      const enqueued: string[] = [];
      for (const p of [first, second]) p.on("enqueued", (e) => void enqueued.push(e.workId));
      const tick = first.defineAction("tick", () => undefined);
      second.defineAction("tick", () => undefined);
      await first.schedule("s", { cron: "* * * * * *" }, tick, {});
      t.clock.advance(1000);
      await pass(second);
      expect(overtaken).toBe(true);
      const [race] = await first.schedules();
      expect(enqueued).toEqual([race!.lastWorkId]);
      const raced = spans("enqueue race");
      expect(raced).toHaveLength(2);
      expect(raced.map((s) => s.attributes["messaging.message.id"])).toEqual([race!.lastWorkId, undefined]);
      for (const s of raced) expect(s.status.code).toBe(SpanStatusCode.UNSET);
    });

    test("a tracer that throws never fails work; work enqueued without a trace gets a root span", async () => {
      exporter.reset();
      const t = await ctx();
      const throwing: Telemetry = {
        enqueue: () => {
          throw new Error("tracer bug");
        },
        attempt: () => {
          throw new Error("tracer bug");
        },
      };
      const warnings: string[] = [];
      const onWarning = (w: Error) => void warnings.push(w.message);
      process.on("warning", onWarning);
      try {
        const broken = t.pool({ name: "broken", telemetry: throwing });
        const a = broken.defineAction("a", () => 1);
        const id = await broken.enqueueAction(a, {});
        await broken.runOnce();
        expect(await broken.status(id)).toMatchObject({ state: "finished", result: { kind: "success" } });
        await new Promise((r) => setImmediate(r));
        expect(warnings.filter((w) => w.includes("telemetry"))).toHaveLength(1);
      } finally {
        process.off("warning", onWarning);
      }
      // Work enqueued by a process that does not trace: its attempt starts a trace of its own, with no link.
      const untraced = t.pool({ name: "shared" });
      const tracedWorker = t.pool({ name: "shared", telemetry: openTelemetry({ tracerProvider: provider }) });
      const b = untraced.defineAction("b", () => 2);
      tracedWorker.defineAction("b", () => 2);
      await untraced.enqueueAction(b, {});
      await tracedWorker.runOnce();
      const [attempt] = spans("process shared");
      expect(spans("enqueue shared")).toEqual([]);
      expect(attempt!.parentSpanContext).toBeUndefined();
      expect(attempt!.links).toEqual([]);
      expect(attempt!.attributes["workpool.attempt.outcome"]).toBe("success");
      expect(trace.getActiveSpan()).toBeUndefined();
    });
  });
}
