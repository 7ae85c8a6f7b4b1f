// Enqueue one job per call, each call awaited: one durable commit per job.
export default {
  id: "enqueue-one",
  perRep: true,
  metrics: [{ key: "enqueueOne", short: "enqueue one at a time", label: (m) => `enqueue one at a time, ${m.enqueueOne.toLocaleString("en-US")} jobs`, unit: "jobs/s", better: "higher" }],
  async measure({ system, mode, ctx, child }) {
    await system.reset(ctx);
    const r = await child("enqueueOne", { n: mode.enqueueOne, capS: mode.enqueueOneCapS });
    const capped = r.capped ? { enqueueOne: `${r.done.toLocaleString("en-US")} of ${r.n.toLocaleString("en-US")} in ${mode.enqueueOneCapS} s` } : {};
    return { values: { enqueueOne: r.rate }, capped, detail: { seconds: r.seconds, done: r.done } };
  },
};
