// Many workflow runs asleep at once (10,000; 2,000 with --quick), each in `step.sleep(1 h)`:
// the heap of the started worker process after a forced GC, before the runs are started
// and once every run's first advance has run, and the rows the store holds then. The
// claim it checks: a sleeping run costs rows, not memory. workpool only.
export default {
  id: "wf-sleepers",
  perRep: true,
  appliesTo: (system) => system.ours && typeof system.openWorkflows === "function",
  metrics: [
    {
      key: "wfSleepBytes",
      short: "heap per sleeping run",
      label: (m) => `heap per sleeping workflow run after a forced GC, ${m.wfSleepers.toLocaleString("en-US")} runs asleep at once`,
      unit: "bytes",
      better: "lower",
    },
    {
      key: "wfSleepHeapMb",
      short: "heap with all asleep",
      label: (m) => `heap of the worker process after a forced GC with ${m.wfSleepers.toLocaleString("en-US")} runs asleep`,
      unit: "MB",
      better: "lower",
    },
    {
      key: "wfSleepRows",
      short: "rows per sleeping run",
      label: () =>
        "rows in the store per sleeping run: its run, its journal entry, its pending sleep work, its finished advance work (until retention)",
      unit: "rows",
      better: "lower",
    },
  ],
  async measure({ mode, child }) {
    const r = await child("wfSleepers", { n: mode.wfSleepers, capS: mode.wfSleepersCapS });
    const rows = r.rows.runs + r.rows.steps + r.rows.events + r.rows.workPending + r.rows.workFinished + r.rows.workOther;
    return {
      values: { wfSleepBytes: r.bytesPerRun, wfSleepHeapMb: r.heapAfterMb, wfSleepRows: rows / r.n },
      capped: {},
      detail: r,
    };
  },
};
