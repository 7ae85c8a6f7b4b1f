#!/usr/bin/env node
// What watching workflows costs: N runs of a four-step workflow (action, action, mutation,
// action; no-op handlers) started as a backlog on SQLite (synchronous=NORMAL), then drained
// by one started worker at maxParallelism 100, in this process. CPU (process.cpuUsage())
// and wall time of the drain, per step. --mode: `off` (no listener, no telemetry),
// `poolmetrics` (admin.observe() of the pool's own events only: what a pool's metrics cost
// before the workflow metrics), `metrics` (admin.observe(pool): the workflow events too,
// each built and counted), `otel` (metrics, and openTelemetry() on the pool with an
// in-memory exporter: every span is made and kept).
// --dist names the built library to load, so two builds can be compared. Not part of the
// comparison; see notes/workflow-observe.md.
//
//   node workflow-observe.mjs [--dist=../dist] [--mode=off|metrics|otel] [--runs=1000]
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, "").split("=")));
const dist = pathToFileURL(resolve(args.dist ?? new URL("../dist", import.meta.url).pathname) + "/");
const mode = args.mode ?? "off";
const n = Number(args.runs ?? 1000);

const lib = await import(new URL("index.js", dist).href);
const { sqliteStore } = await import(new URL("drivers/sqlite/index.js", dist).href);
const { WorkflowManager } = await import(new URL("workflow/index.js", dist).href);
const { workpoolAdmin } = await import(new URL("admin/index.js", dist).href);

const dir = mkdtempSync(join(tmpdir(), "wf-observe-"));
const file = join(dir, "bench.db");
const store = sqliteStore({ filename: file });
store.db.pragma("synchronous = NORMAL");
let spans = 0;
let telemetry;
if (mode === "otel") {
  const require = createRequire(new URL("index.js", dist));
  const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require("@opentelemetry/sdk-trace-base");
  const { openTelemetry } = await import(new URL("integrations/opentelemetry.js", dist).href);
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  telemetry = openTelemetry({ tracerProvider: provider });
  spans = () => exporter.getFinishedSpans().length;
}
const pool = new lib.Workpool(store, { name: "bench", maxParallelism: 100, logLevel: "ERROR", ...(telemetry ? { telemetry } : {}) });
const wf = new WorkflowManager(pool);
const a = pool.defineAction("a", () => null);
const b = pool.defineAction("b", () => null);
const m = pool.defineMutation("m", () => null);
let done = 0;
let finish;
const all = new Promise((r) => (finish = r));
const ended = pool.defineMutation("ended", () => {
  if (++done === n) finish();
});
const four = wf.define("four", async (step) => {
  await step.runAction(a, null);
  await step.runAction(b, null);
  await step.runMutation(m, null);
  await step.runAction(a, null);
  return null;
});
const admin = mode === "off" ? null : workpoolAdmin(store);
// The pool's own events only: a pool as observe() sees it, without its workflow events.
const poolEventsOnly = {
  name: pool.name,
  on: (event, listener) => (event.startsWith("workflow") ? () => undefined : pool.on(event, listener)),
};
admin?.observe(mode === "poolmetrics" ? poolEventsOnly : pool);
for (let i = 0; i < n; i++) await wf.start(four, null, { onComplete: ended });

const t0 = performance.now();
const cpu = process.cpuUsage();
await pool.start();
await all;
const used = process.cpuUsage(cpu);
const seconds = (performance.now() - t0) / 1000;
await pool.stop();
const steps = 4 * n;
const line = {
  mode,
  dist: args.dist ?? "../dist",
  runs: n,
  stepsPerS: Math.round(steps / seconds),
  cpuUsPerStep: Math.round((used.user + used.system) / steps),
};
if (admin) line.finishedCounted = Number(/workpool_workflow_runs_finished_total\{[^}]*\} (\d+)/.exec(await admin.metrics())?.[1] ?? 0);
if (spans) line.spans = spans();
console.log(JSON.stringify(line));
await store.close();
rmSync(dir, { recursive: true, force: true });
