// OpenTelemetry tracing: a request span enqueues an email; the attempt that sends it (after
// one failure and a retry) and its onComplete join the request's trace, and the handler's
// own span nests under its attempt. The spans are printed as a tree at the end.
// Run it with `npm run example:tracing` (after `npm install`); it uses SQLite in
// `tracing-example.db` (recreated on every run) and needs no server. In an app, register
// the OpenTelemetry SDK as usual (NodeSDK with an OTLP exporter) and pass openTelemetry().
import { rmSync } from "node:fs";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { Workpool } from "workpool";
import { openTelemetry } from "workpool/opentelemetry";
import { sqliteStore } from "workpool/sqlite";

const DB_FILE = "tracing-example.db";
for (const suffix of ["", "-wal", "-shm"]) rmSync(DB_FILE + suffix, { force: true });

// The SDK: spans kept in memory so this script can print them.
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
trace.setGlobalTracerProvider(provider);
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const tracer = trace.getTracer("example-app");

const store = sqliteStore({ filename: DB_FILE });
const pool = new Workpool(store, { name: "emails", telemetry: openTelemetry(), logLevel: "ERROR" });

let calls = 0;
const send = pool.defineAction("sendEmail", async (_ctx, /** @type {{ to: string }} */ args) =>
  tracer.startActiveSpan("smtp.send", async (span) => {
    span.setAttribute("email.to", args.to);
    span.end();
    if (++calls === 1) throw new Error("SMTP server busy");
    return { messageId: `m-${calls}` };
  }),
);
const sent = pool.defineOnComplete("emailSent", () => undefined);

// What a web request would do: enqueue inside its own span.
await tracer.startActiveSpan("POST /signup", async (span) => {
  await pool.enqueueAction(send, { to: "ada@example.com" }, { onComplete: sent, retry: { maxAttempts: 3, initialBackoffMs: 50, base: 2 } });
  span.end();
});

await pool.start();
for (let i = 0; i < 100 && exporter.getFinishedSpans().filter((s) => s.name.startsWith("onComplete")).length === 0; i++) {
  await new Promise((resolve) => setTimeout(resolve, 20));
}
await pool.stop();
await store.close();

// One trace: print it as a tree, children under their parent, in start order.
const spans = exporter.getFinishedSpans().sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
const children = new Map();
for (const s of spans) {
  const parent = s.parentSpanContext?.spanId ?? null;
  if (!children.has(parent)) children.set(parent, []);
  children.get(parent).push(s);
}
const KINDS = ["internal", "server", "client", "producer", "consumer"];
function print(parent, depth) {
  for (const s of children.get(parent) ?? []) {
    const outcome = s.attributes["workpool.attempt.outcome"];
    const attempt = s.attributes["workpool.attempt"];
    const extra = [attempt && `attempt ${attempt}`, outcome, s.status.message].filter(Boolean).join(", ");
    console.log(`${"  ".repeat(depth)}${s.name} [${KINDS[s.kind]}]${extra ? ` ${extra}` : ""}`);
    print(s.spanContext().spanId, depth + 1);
  }
}
print(null, 0);
console.log(`${new Set(spans.map((s) => s.spanContext().traceId)).size} trace, ${spans.length} spans`);
