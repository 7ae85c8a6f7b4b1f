// Replay of a long journal: a run with 1,000 sequential steps (200 with --quick) waits for
// an event at the end; a fresh process (a new Workpool and WorkflowManager) sends it and
// advances the run once, replaying the journal. Two journals: step.now() values, and
// action steps (each given back in its own round). The time of that one runOnce(), and
// per entry beside a 1-step run advanced just before in the same process. workpool only.
const KINDS = [
  { kind: "now", short: "now()" },
  { kind: "actions", short: "action steps" },
];
const cap = (s) => s[0].toUpperCase() + s.slice(1);

export default {
  id: "wf-replay",
  perRep: true,
  appliesTo: (system) => system.ours && typeof system.openWorkflows === "function",
  metrics: KINDS.flatMap(({ kind, short }) => [
    {
      key: `wfReplay${cap(kind)}Ms`,
      short: `replay advance, ${short}`,
      label: (m) => `one advance in a fresh process of a run whose journal holds ${m.wfJournal.toLocaleString("en-US")} ${short}`,
      unit: "ms",
      better: "lower",
    },
    {
      key: `wfReplay${cap(kind)}Us`,
      short: `replay per entry, ${short}`,
      label: () => `that advance per journal entry, beside a 1-entry run's advance in the same process (${short})`,
      unit: "µs",
      better: "lower",
    },
  ]),
  async measure({ mode, child }) {
    const values = {};
    const detail = {};
    for (const { kind } of KINDS) {
      const built = await child("wfReplayBuild", { k: mode.wfJournal, kind, capS: mode.wfReplayCapS });
      const r = await child("wfReplayAdvance", built);
      values[`wfReplay${cap(kind)}Ms`] = r.bigMs;
      values[`wfReplay${cap(kind)}Us`] = r.perEntryUs;
      detail[kind] = { ...r, buildS: built.buildS };
    }
    return { values, capped: {}, detail };
  },
};
