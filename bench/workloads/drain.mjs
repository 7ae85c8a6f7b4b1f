// Drain a backlog of no-op jobs at a given concurrency. The backlog is written by one
// child process; a fresh child then runs only the worker, so its peak RSS is the
// worker's. The c=100 drain also gives the peak-RSS row. On PostgreSQL each job's
// server CPU and WAL over its whole life are measured too (lib/life-cost.mjs).
import { DRAIN_CONCURRENCIES, FILL_BATCH_SIZE } from "../lib/env.mjs";
import { drainLife, lifeMetrics, lifeValues } from "../lib/life-cost.mjs";

function drainWorkload(concurrency) {
  const key = `drain${concurrency}`;
  const metrics = [
    {
      key,
      short: `drain backlog, c=${concurrency}`,
      label: (m) => `drain ${m.drain.toLocaleString("en-US")} queued, concurrency ${concurrency}`,
      unit: "jobs/s",
      better: "higher",
    },
    {
      key: `${key}Cpu`,
      short: `drain c=${concurrency}, CPU per job`,
      label: () => `main-thread CPU of the worker process per job drained, concurrency ${concurrency} (its database server not counted)`,
      unit: "µs",
      better: "lower",
    },
    ...lifeMetrics(key, `drain c=${concurrency}`),
  ];
  if (concurrency === 100) {
    metrics.push({
      key: "stallMs",
      short: "longest event-loop stall",
      label: () => "longest event-loop stall of the worker process (drain, concurrency 100)",
      unit: "ms",
      better: "lower",
    });
    metrics.push({
      key: "rssMb",
      short: "peak RSS of worker",
      label: () => "peak RSS of the worker process (drain, concurrency 100)",
      unit: "MB",
      better: "lower",
    });
  }
  return {
    id: `drain-${concurrency}`,
    perRep: true,
    metrics,
    async measure({ system, mode, ctx, child }) {
      await system.reset(ctx);
      const { r, cost } = await drainLife({
        system,
        child,
        fill: () => child("enqueueBatch", { n: mode.drain, batch: FILL_BATCH_SIZE, warmUp: false }),
        drain: () => child("drain", { n: mode.drain, concurrency, capS: mode.drainCapS }),
      });
      const life = lifeValues(key, cost);
      if (life.line) process.stderr.write(`    ${system.label} ${this.id}: ${life.line}\n`);
      const values = { [key]: r.rate, [`${key}Cpu`]: r.cpuUsPerJob, ...life.values };
      if (concurrency === 100) {
        values.stallMs = r.maxLoopStallMs;
        values.rssMb = r.peakRssMb;
      }
      return {
        values,
        capped: r.capped
          ? { [key]: `${r.completed.toLocaleString("en-US")} of ${r.n.toLocaleString("en-US")} in ${mode.drainCapS} s` }
          : {},
        detail: { seconds: r.seconds, completed: r.completed, serverCost: cost },
      };
    },
  };
}

export default DRAIN_CONCURRENCIES.map(drainWorkload);
