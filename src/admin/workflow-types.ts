/**
 * The admin API's types for workflow runs: list filters and pages, counts, and one run's
 * detail (its journal, child runs and events).
 */
import type { JsonValue } from "../types.js";
import type { BlockedInfo, WorkflowStatus, WorkflowStepInfo } from "../workflow/types.js";

/**
 * The states admin.workflows() filters by: a run's state, `canceling` (a cancel taking
 * effect; status() shows these as running), or `finished` / `unfinished`.
 */
export type WorkflowStateFilter = WorkflowStatus["state"] | "canceling" | "finished" | "unfinished";

/** Options of admin.workflows(). */
export interface WorkflowListOptions {
  /** Runs of this pool only (default: every pool). */
  pool?: string;
  /** Runs of this workflow only. */
  name?: string;
  state?: WorkflowStateFilter;
  /** Runs started by this version of the workflow's code. */
  version?: string;
  /** Child runs of this run. */
  parentId?: string;
  /** Runs created at or after this time (epoch ms). */
  createdAfter?: number;
  /** Runs created before this time (epoch ms). */
  createdBefore?: number;
  /** 1..500, default 50. */
  limit?: number;
  /** From a previous page's `cursor`. */
  cursor?: string;
}

/** A run as admin.workflows() lists it. */
export interface WorkflowSummary {
  workflowId: string;
  pool: string;
  name: string;
  /** The version of the code that started it (define()'s `version`), or null. */
  version: string | null;
  state: WorkflowStatus["state"];
  /** True while a cancel (or the run's timeout) is taking effect. */
  cancelRequested: boolean;
  /** Journal entries. */
  steps: number;
  /** The journal's size: its entries' args and the outcomes given to the function, as JSON text. */
  journalBytes: number;
  parentId: string | null;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
  /** A failed run's error, cut to 1,000 characters. */
  error?: string;
  /** A blocked run's mismatch. */
  blocked?: BlockedInfo;
}

/** One page of admin.workflows(). */
export interface WorkflowListPage {
  items: WorkflowSummary[];
  /** Pass to the next call; null on the last page. Newest first, keyset-paginated. */
  cursor: string | null;
}

/** How many runs of one workflow are in each state. `running` includes runs being canceled. */
export interface WorkflowCounts {
  pool: string;
  name: string;
  running: number;
  blocked: number;
  success: number;
  failed: number;
  canceled: number;
}

/** Options of admin.workflowRun(). */
export interface WorkflowRunOptions {
  /** The first journal entry to return (default 0). */
  stepsFrom?: number;
  /** Most journal entries to return, 1..1000 (default 500). */
  stepsLimit?: number;
}

/** An event sent to a run. */
export interface WorkflowEventInfo {
  seq: number;
  name: string;
  payload: JsonValue;
  sentAt: number;
  /** The journal entry whose awaitEvent took it; null while it waits to be taken. */
  consumedStep: number | null;
}

/** A journal entry as admin.workflowRun() shows it. */
export interface WorkflowStepDetail extends WorkflowStepInfo {
  /** When an open sleep (or an event wait's timeout) is due, epoch ms. */
  wakeAt?: number;
}

/** Everything about one run: admin.workflowRun(). */
export interface WorkflowRunDetail {
  run: WorkflowSummary & {
    args: JsonValue;
    /** A successful run's return value. */
    result?: JsonValue;
    /** The error of a failed run, whole. */
    error?: string;
    /** The onComplete mutation's name and its delivery. */
    onComplete: { handler: string; state: "pending" | "done" | "failed" | "none"; failedAttempts: number; error: string | null } | null;
    context?: JsonValue;
    /** When the run's timeout cancels it, epoch ms, or null. */
    deadline: number | null;
    /** The parent's journal entry that started this run. */
    parentStep: number | null;
  };
  /** Journal entries from `stepsFrom`, in order. */
  steps: WorkflowStepDetail[];
  /** The entry to read the next part of the journal from, or null when it was read to its end. */
  nextStep: number | null;
  /** The first page of child runs (newest first); admin.workflows({ parentId }) reads the rest. */
  children: WorkflowListPage;
  /** The newest 200 events sent to the run, newest first. */
  events: WorkflowEventInfo[];
}
