// CPU per job of workpool SQLite beside the smallest SQL for the same work on the same
// schema (lib/sql-floor.mjs), each case in a fresh process that runs both: drains at
// concurrency 100 and 10, enqueue one at a time, enqueue in batches of BATCH_SIZE. The
// FULL and NORMAL systems each give their own column. The ratio is taken in each process,
// then its median over the repetitions is shown: absolute CPU figures drift between runs.
import { BATCH_SIZE } from "../lib/env.mjs";

const CASES = [
  { key: "cpuDrain100", short: "drain c=100", kind: "drain", concurrency: 100 },
  { key: "cpuDrain10", short: "drain c=10", kind: "drain", concurrency: 10 },
  { key: "cpuEnqueueOne", short: "enqueue one", kind: "enqueueOne" },
  { key: "cpuEnqueueBatch", short: `enqueue batch of ${BATCH_SIZE}`, kind: "enqueueBatch", batch: BATCH_SIZE },
];

const sizeOf = (c, mode) => (c.kind === "drain" ? mode.cpuDrain : c.kind === "enqueueOne" ? mode.cpuEnqueueOne : mode.cpuEnqueueBatch);

export default {
  id: "cpu-floor",
  perRep: true,
  /** Only systems that can open a raw reference of their own store (workpool SQLite). */
  appliesTo: (system) => typeof system.openReference === "function",
  metrics: CASES.flatMap((c) => [
    {
      key: c.key,
      short: `CPU per job, ${c.short}`,
      label: (m) => `main-thread CPU per job, ${c.short} (${sizeOf(c, m).toLocaleString("en-US")} jobs, beside the raw SQL reference)`,
      unit: "µs",
      better: "lower",
    },
    {
      key: `${c.key}Floor`,
      short: `CPU per job, ${c.short}: raw SQL`,
      label: () => `main-thread CPU per job of the smallest SQL for the same work, ${c.short}, same process`,
      unit: "µs",
      better: "lower",
    },
    {
      key: `${c.key}X`,
      short: `CPU per job, ${c.short}: × raw SQL`,
      label: () => `CPU per job as a multiple of the raw SQL reference, ${c.short} (ratio taken in each process)`,
      unit: "×",
      better: "lower",
    },
  ]),
  async measure({ mode, child, rep }) {
    const values = {};
    const capped = {};
    const detail = {};
    for (const [i, c] of CASES.entries()) {
      const kase = { kind: c.kind, n: sizeOf(c, mode), concurrency: c.concurrency, batch: c.batch, capS: mode.cpuCapS };
      const r = await child("cpuVsFloor", { kase, floorFirst: ((rep ?? 0) + i) % 2 === 1 });
      values[c.key] = r.usPerJob;
      values[`${c.key}Floor`] = r.floorUsPerJob;
      values[`${c.key}X`] = r.ratio;
      if (r.capped) capped[c.key] = `${r.jobs.toLocaleString("en-US")} of ${kase.n.toLocaleString("en-US")} in ${mode.cpuCapS} s`;
      detail[c.key] = { jobs: r.jobs };
    }
    return { values, capped, detail };
  },
};
