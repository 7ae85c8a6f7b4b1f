// Idle enqueue-to-start latency: a started, idle worker; jobs enqueued on a fixed
// schedule `latencyIntervalMs` apart; per job, from just before the enqueue call to the
// first line of its handler (same process, so one clock).
import { LATENCY_CONCURRENCY } from "../lib/env.mjs";

const label = (p) => (m) => `idle enqueue→start latency p${p} (${m.latencyJobs} jobs, ${m.latencyIntervalMs} ms apart)`;

export default {
  id: "latency",
  perRep: true,
  metrics: [
    { key: "latP50", short: "idle latency p50", label: label(50), unit: "ms", better: "lower" },
    { key: "latP95", short: "idle latency p95", label: label(95), unit: "ms", better: "lower" },
    { key: "latP99", short: "idle latency p99", label: label(99), unit: "ms", better: "lower" },
  ],
  async measure({ system, mode, ctx, child }) {
    await system.reset(ctx);
    const r = await child("latency", { n: mode.latencyJobs, intervalMs: mode.latencyIntervalMs, concurrency: LATENCY_CONCURRENCY });
    if (r.received < r.n) throw new Error(`only ${r.received} of ${r.n} latency probes started`);
    return { values: { latP50: r.p50, latP95: r.p95, latP99: r.p99 }, detail: { max: r.max } };
  },
};
