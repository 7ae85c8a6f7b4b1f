/**
 * step-once's count of step work: at most one work per (run, step) in each life of the run
 * (a restart or skip begins a new one), and one timeout per event wait. A work is keyed by
 * the run and entry its context names, and the run's life when the work was first seen.
 */
import type { WorkRow } from "../../src/driver/driver.js";
import { Violation } from "./violation.js";

/** The onComplete of a step's work, which journals its outcome. */
export const STEP_DONE = "workpool:workflow.step-done";
const EVENT_TIMEOUT = "workpool:workflow.event-timeout";

/** The step work seen so far. */
export class StepWorkLedger {
  /**
   * The work enqueued for each step (`run n life`, or `run n life timeout` for an event
   * wait's timeout): one per step in each life of the run (a restart or skip starts a new one).
   */
  private readonly stepWork = new Map<string, string>();
  /** Each step work's key in stepWork, from when it was first seen. */
  private readonly workKey = new Map<string, string>();

  constructor(
    private readonly label: (id: string) => string,
    private readonly runLabel: (id: string) => string,
  ) {}

  /** At most one work per step in each life of its run; returns how many steps of each run have work. */
  check(rows: readonly WorkRow[], lifeOf: (runId: string) => number): Map<string, number> {
    for (const r of rows) {
      if (this.workKey.has(r.id)) continue;
      let step: { r: string; n: number } | null = null;
      if (r.onComplete === STEP_DONE && r.context !== null) step = JSON.parse(r.context) as { r: string; n: number };
      else if (r.fnName === EVENT_TIMEOUT) step = JSON.parse(r.args) as { r: string; n: number };
      if (step === null) continue;
      const key = `${step.r} ${step.n} ${lifeOf(step.r)}${r.fnName === EVENT_TIMEOUT ? " timeout" : ""}`;
      this.workKey.set(r.id, key);
      const before = this.stepWork.get(key);
      if (before !== undefined) {
        const [run, n] = key.split(" ");
        throw new Violation(
          "step-once",
          `run ${this.runLabel(run!)}: step ${n} got a second work ${this.label(r.id)}${key.endsWith("timeout") ? " (timeout)" : ""}, after ${this.label(before)}`,
        );
      }
      this.stepWork.set(key, r.id);
    }
    const perRun = new Map<string, number>();
    for (const key of this.stepWork.keys()) {
      const run = key.slice(0, key.indexOf(" "));
      perRun.set(run, (perRun.get(run) ?? 0) + 1);
    }
    return perRun;
  }
}
