// Enqueue one job per call, each call awaited: one durable commit per job. The same child
// process alternates those enqueues with single-row commits to the system's own store
// (its commit reference), so the share of the raw commit rate a system reaches is
// measured at the same moments as its enqueue rate.
export default {
  id: "enqueue-one",
  perRep: true,
  metrics: [
    {
      key: "enqueueOne",
      short: "enqueue one at a time",
      label: (m) => `enqueue one at a time, ${m.enqueueOne.toLocaleString("en-US")} jobs`,
      unit: "jobs/s",
      better: "higher",
    },
    {
      key: "enqueueOneOfRaw",
      short: "enqueue one at a time, % of raw commits",
      label: () => "enqueue one at a time as a share of single-row commits to the same store, alternating in the same process",
      unit: "%",
      better: "higher",
    },
    {
      key: "enqueueOneCpu",
      short: "enqueue one at a time, CPU per job",
      label: () => "main-thread CPU of the enqueuing process per job enqueued one at a time (its database server not counted)",
      unit: "µs",
      better: "lower",
    },
  ],
  async measure({ system, mode, ctx, child }) {
    await system.reset(ctx);
    const r = await child("enqueueOne", {
      n: mode.enqueueOne,
      capS: mode.enqueueOneCapS,
      reference: system.commitReference,
      warmUpS: mode.enqueueOneWarmUpS,
    });
    const cap = `${r.done.toLocaleString("en-US")} of ${r.n.toLocaleString("en-US")} in ${mode.enqueueOneCapS} s`;
    const capped = r.capped ? { enqueueOne: cap, enqueueOneOfRaw: cap } : {};
    // A system without a commit reference has no share to report.
    const values = { enqueueOne: r.rate, enqueueOneCpu: r.cpuUsPerJob };
    if (r.ofRef !== null) values.enqueueOneOfRaw = r.ofRef * 100;
    return { values, capped, detail: { seconds: r.seconds, done: r.done, refRate: r.refRate } };
  },
};
