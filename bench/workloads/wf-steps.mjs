// A four-step workflow (action, action, mutation, action): N runs started as a backlog,
// drained by one started worker, beside the same 4 × N steps enqueued as plain work of the
// same handlers, in the same fresh process (the order alternates between repetitions).
// CPU per step is process.cpuUsage() of that process over the drain. DBOS runs the same
// workflow from a DBOS queue (no plain side). Notes: notes/workflows.md.
const CONCURRENCY = 100;

export default {
  id: "wf-steps",
  perRep: true,
  /** Systems with workflows (workpool's stores, DBOS). */
  appliesTo: (system) => typeof system.openWorkflows === "function",
  metrics: [
    {
      key: "wfStepRate",
      short: "4-step workflow, steps",
      label: (m) => `4-step workflow: steps per second, ${m.wfRuns.toLocaleString("en-US")} runs drained at concurrency ${CONCURRENCY}`,
      unit: "steps/s",
      better: "higher",
    },
    {
      key: "wfStepCpu",
      short: "4-step workflow, CPU per step",
      label: () => "4-step workflow: CPU of the worker process per step (its database server not counted)",
      unit: "µs",
      better: "lower",
    },
    {
      key: "wfPlainStepRate",
      short: "same steps as plain work",
      label: () => "the same 4 × N steps enqueued as plain work of the same handlers: steps per second, same process",
      unit: "steps/s",
      better: "higher",
    },
    {
      key: "wfPlainStepCpu",
      short: "plain work, CPU per step",
      label: () => "the same steps as plain work: CPU of the worker process per step",
      unit: "µs",
      better: "lower",
    },
    {
      key: "wfStepCpuX",
      short: "workflow CPU per step: × plain",
      label: () => "workflow CPU per step as a multiple of plain work's (ratio taken in each process; target ≤ 1.5)",
      unit: "×",
      better: "lower",
    },
  ],
  async measure({ mode, child, rep }) {
    const r = await child("wfSteps", { n: mode.wfRuns, concurrency: CONCURRENCY, capS: mode.wfCapS, plainFirst: (rep ?? 0) % 2 === 1 });
    const values = { wfStepRate: r.workflow.rate, wfStepCpu: r.workflow.cpuUsPerStep };
    const capped = {};
    if (r.workflow.capped) capped.wfStepRate = `${r.workflow.steps.toLocaleString("en-US")} steps in ${mode.wfCapS} s`;
    if (r.plain) {
      values.wfPlainStepRate = r.plain.rate;
      values.wfPlainStepCpu = r.plain.cpuUsPerStep;
      values.wfStepCpuX = r.cpuRatio;
      if (r.plain.capped) capped.wfPlainStepRate = `${r.plain.steps.toLocaleString("en-US")} steps in ${mode.wfCapS} s`;
    }
    return { values, capped, detail: r };
  },
};
