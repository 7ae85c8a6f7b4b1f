// Enqueue in batches of BATCH_SIZE jobs per call (one transaction or bulk command each).
import { BATCH_SIZE } from "../lib/env.mjs";

export default {
  id: "enqueue-batch",
  perRep: true,
  metrics: [
    {
      key: "enqueueBatch",
      short: `enqueue in batches of ${BATCH_SIZE}`,
      label: (m) => `enqueue in batches of ${BATCH_SIZE.toLocaleString("en-US")}, ${m.enqueueBatch.toLocaleString("en-US")} jobs`,
      unit: "jobs/s",
      better: "higher",
    },
    {
      key: "enqueueBatchCpu",
      short: `enqueue in batches of ${BATCH_SIZE}, CPU per job`,
      label: () =>
        `main-thread CPU of the enqueuing process per job enqueued in batches of ${BATCH_SIZE.toLocaleString("en-US")} (its database server not counted)`,
      unit: "µs",
      better: "lower",
    },
  ],
  async measure({ system, mode, ctx, child }) {
    await system.reset(ctx);
    const r = await child("enqueueBatch", { n: mode.enqueueBatch, capS: mode.enqueueBatchCapS });
    const capped = r.capped
      ? { enqueueBatch: `${r.done.toLocaleString("en-US")} of ${r.n.toLocaleString("en-US")} in ${mode.enqueueBatchCapS} s` }
      : {};
    return { values: { enqueueBatch: r.rate, enqueueBatchCpu: r.cpuUsPerJob }, capped, detail: { seconds: r.seconds, done: r.done } };
  },
};
