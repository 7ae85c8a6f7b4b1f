/** The events a WorkflowManager emits on its pool, about its runs (see events.ts for the rest). */

/** A workflow run was started (a child run too), by start() or a runWorkflow step. */
export interface WorkflowStartedEvent {
  event: "workflowStarted";
  pool: string;
  workflowId: string;
  /** The workflow's name. */
  workflow: string;
  /** The parent run's id, for a child run. */
  parentId?: string;
  startedAt: number;
}

/** A workflow run ended. */
export interface WorkflowFinishedEvent {
  event: "workflowFinished";
  pool: string;
  workflowId: string;
  workflow: string;
  outcome: "success" | "failed" | "canceled";
  /** The error, for `failed`. */
  error?: string;
  finishedAt: number;
  /** finishedAt - when the run was created. */
  durationMs: number;
  /** The journal at the end: its entries, and the bytes of their args and results. */
  journalEntries: number;
  journalBytes: number;
}

/** A step's outcome was given to its workflow function. */
export interface WorkflowStepEvent {
  event: "workflowStep";
  pool: string;
  workflowId: string;
  workflow: string;
  /** The step's position in the journal. */
  n: number;
  kind: "action" | "mutation" | "sleep" | "event" | "workflow";
  /** The handler, event or workflow name (for a sleep, "sleep"). */
  name: string;
  outcome: "success" | "failed" | "canceled" | "event" | "timeout";
  /** From the step's call to its outcome, as the journal records them. */
  durationMs: number;
}

/** An advance replayed a run's journal: its function ran again from the start. */
export interface WorkflowReplayedEvent {
  event: "workflowReplayed";
  pool: string;
  workflowId: string;
  workflow: string;
  /** The journal entries the replay went through. */
  entries: number;
  /** How long the replay took (wall clock, not the pool's clock). */
  durationMs: number;
}
