/**
 * The workflow metrics of the admin's registry, counted from the workflow events of the
 * pools this process observes (a WorkflowManager emits them on its pool): runs started
 * and finished, step durations, replays, and the journal's size when a run ends.
 */
import { Counter, Histogram, type Registry } from "prom-client";
import type { ObservablePool } from "./types.js";

/** The workflow metric names, as documented in docs/operations.md. */
export const WORKFLOW_METRIC_NAMES = {
  workflowsStarted: "workpool_workflow_runs_started_total",
  workflowsFinished: "workpool_workflow_runs_finished_total",
  workflowStepDuration: "workpool_workflow_step_duration_seconds",
  workflowReplayDuration: "workpool_workflow_replay_duration_seconds",
  workflowReplayedEntries: "workpool_workflow_replayed_entries",
  workflowJournalEntries: "workpool_workflow_journal_entries",
  workflowJournalBytes: "workpool_workflow_journal_bytes",
} as const;

/** Step durations, seconds: from a quick action to a week-long wait for an event. */
const STEP_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 14_400, 86_400, 604_800];
/** Replay durations, seconds: replays are CPU and one journal read. */
const REPLAY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Journal entries (of a replay, or of a run at its end). */
const ENTRY_BUCKETS = [1, 10, 100, 1000, 10_000, 100_000];
/** Journal bytes of a run at its end: up to the default cap of 64 MiB. */
const BYTE_BUCKETS = [1024, 16_384, 262_144, 1_048_576, 4_194_304, 16_777_216, 67_108_864];

type RunLabels = "pool" | "workflow";

/** Counters and histograms of workflow runs, in `registry`. */
export class WorkflowMetrics {
  private readonly started: Counter<RunLabels>;
  private readonly finished: Counter<RunLabels | "outcome">;
  private readonly stepDuration: Histogram<RunLabels | "kind">;
  private readonly replayDuration: Histogram<RunLabels>;
  private readonly replayedEntries: Histogram<RunLabels>;
  private readonly journalEntries: Histogram<RunLabels>;
  private readonly journalBytes: Histogram<RunLabels>;

  constructor(registry: Registry) {
    const registers = [registry];
    const labelNames = ["pool", "workflow"] as const;
    const n = WORKFLOW_METRIC_NAMES;
    this.started = new Counter({ name: n.workflowsStarted, help: "Workflow runs started (child runs too)", labelNames, registers });
    this.finished = new Counter({
      name: n.workflowsFinished,
      help: "Workflow runs finished, by outcome (success, failed, canceled)",
      labelNames: [...labelNames, "outcome"],
      registers,
    });
    this.stepDuration = new Histogram({
      name: n.workflowStepDuration,
      help: "From a step's call to its outcome, seconds, by step kind (action, mutation, sleep, event, workflow)",
      labelNames: [...labelNames, "kind"],
      buckets: STEP_BUCKETS,
      registers,
    });
    this.replayDuration = new Histogram({
      name: n.workflowReplayDuration,
      help: "How long an advance took to replay a run's journal (read it and run the function again to where it was), seconds",
      labelNames,
      buckets: REPLAY_BUCKETS,
      registers,
    });
    this.replayedEntries = new Histogram({
      name: n.workflowReplayedEntries,
      help: "Journal entries an advance replayed",
      labelNames,
      buckets: ENTRY_BUCKETS,
      registers,
    });
    this.journalEntries = new Histogram({
      name: n.workflowJournalEntries,
      help: "Journal entries of a run when it finished",
      labelNames,
      buckets: ENTRY_BUCKETS,
      registers,
    });
    this.journalBytes = new Histogram({
      name: n.workflowJournalBytes,
      help: "Bytes of args and results in a run's journal when it finished",
      labelNames,
      buckets: BYTE_BUCKETS,
      registers,
    });
  }

  /** Listens to `pool`'s workflow events; returns the functions that stop it. */
  observe(pool: ObservablePool): (() => void)[] {
    return [
      pool.on("workflowStarted", (e) => this.started.inc({ pool: e.pool, workflow: e.workflow })),
      pool.on("workflowFinished", (e) => {
        const run = { pool: e.pool, workflow: e.workflow };
        this.finished.inc({ ...run, outcome: e.outcome });
        this.journalEntries.observe(run, e.journalEntries);
        this.journalBytes.observe(run, e.journalBytes);
      }),
      pool.on("workflowStep", (e) =>
        this.stepDuration.observe({ pool: e.pool, workflow: e.workflow, kind: e.kind }, Math.max(0, e.durationMs) / 1000),
      ),
      pool.on("workflowReplayed", (e) => {
        const run = { pool: e.pool, workflow: e.workflow };
        this.replayDuration.observe(run, Math.max(0, e.durationMs) / 1000);
        this.replayedEntries.observe(run, e.entries);
      }),
    ];
  }
}
