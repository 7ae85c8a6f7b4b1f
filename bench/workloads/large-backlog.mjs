// A large backlog (1M queued; 200k with --quick): fill it in batches, then drain at
// concurrency 100 and compare the throughput at the start of the drain with the end.
// Runs once per system (not per repetition): filling a million rows per system three
// times does not fit the time budget. A drain that does not finish within backlogCapS is
// measured over the time it ran: "end" is then the last part of that window, with the
// table still holding (almost) the whole backlog.
import { BACKLOG_CONCURRENCY, FILL_BATCH_SIZE } from "../lib/env.mjs";

/** Rate over the first and last `fraction` of the drain's duration, from the sampled timeline. */
export function startEndRates(timeline, fraction = 0.2) {
  const total = timeline[timeline.length - 1][0];
  const w = Math.max(500, total * fraction);
  const countAt = (t) => {
    let c = 0;
    for (const [ms, n] of timeline) {
      if (ms > t) break;
      c = n;
    }
    return c;
  };
  const start = (countAt(w) - countAt(0)) / (w / 1000);
  const end = (countAt(total) - countAt(total - w)) / (w / 1000);
  return { start, end };
}

export default {
  id: "large-backlog",
  perRep: false,
  metrics: [
    {
      key: "backlogFill",
      short: "large backlog: fill",
      label: (m) =>
        `fill the large backlog: ${m.backlog.toLocaleString("en-US")} jobs in batches of ${FILL_BATCH_SIZE.toLocaleString("en-US")}`,
      unit: "jobs/s",
      better: "higher",
    },
    {
      key: "backlogStart",
      short: "large backlog: drain start",
      label: (m) => `large backlog (${m.backlog.toLocaleString("en-US")}) drain, first 20% of the run, c=${BACKLOG_CONCURRENCY}`,
      unit: "jobs/s",
      better: "higher",
    },
    {
      key: "backlogEnd",
      short: "large backlog: drain end",
      label: (m) => `large backlog (${m.backlog.toLocaleString("en-US")}) drain, last 20% of the run, c=${BACKLOG_CONCURRENCY}`,
      unit: "jobs/s",
      better: "higher",
    },
  ],
  async measure({ system, mode, ctx, child }) {
    await system.reset(ctx);
    const fill = await child("enqueueBatch", { n: mode.backlog, batch: FILL_BATCH_SIZE, warmUp: false });
    const r = await child("drain", { n: mode.backlog, concurrency: BACKLOG_CONCURRENCY, capS: mode.backlogCapS, sampleMs: 100 });
    const { start, end } = startEndRates(r.timeline);
    await system.reset(ctx);
    const note = r.capped ? `${r.completed.toLocaleString("en-US")} of ${r.n.toLocaleString("en-US")} in ${mode.backlogCapS} s` : null;
    return {
      values: { backlogFill: fill.rate, backlogStart: start, backlogEnd: end },
      capped: note ? { backlogStart: note, backlogEnd: note } : {},
      detail: { fillSeconds: fill.seconds, drainSeconds: r.seconds, completed: r.completed, overallRate: r.rate, peakRssMb: r.peakRssMb },
    };
  },
};
