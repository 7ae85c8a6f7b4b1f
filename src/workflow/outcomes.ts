/**
 * How outcomes are stored: a step's work result as a journal outcome, a run's result, and
 * what status() and steps() show of them.
 */
import type { RunRow, StepRow, StepState } from "../driver/workflow-ops.js";
import type { JsonValue, RunResult, WorkId } from "../types.js";
import { entryInfo, type StepOutcome } from "./execution.js";
import type { BlockedInfo, WorkflowResult, WorkflowStatus, WorkflowStepInfo } from "./types.js";

/** The journal state and outcome of a step whose work ended with `result`. */
export function workOutcome(result: RunResult): { state: StepState; outcome: StepOutcome } {
  switch (result.kind) {
    case "success":
      return { state: "done", outcome: { kind: "success", value: (result.returnValue ?? null) as JsonValue } };
    case "failed": {
      const outcome: StepOutcome = { kind: "failed", error: result.error };
      if (result.errorData !== undefined) outcome.data = result.errorData as JsonValue;
      return { state: "failed", outcome };
    }
    case "canceled":
      return { state: "canceled", outcome: { kind: "canceled" } };
  }
}

/** The outcome a parent's step gets from its child run's result. */
export function childOutcome(result: WorkflowResult<unknown>): { state: StepState; outcome: StepOutcome } {
  if (result.kind === "success") return { state: "done", outcome: { kind: "success", value: (result.returnValue ?? null) as JsonValue } };
  if (result.kind === "failed")
    return { state: "failed", outcome: { kind: "failed", error: `the child workflow failed: ${result.error}` } };
  return { state: "canceled", outcome: { kind: "canceled" } };
}

/** The run state a result ends in. */
export function finalState(result: WorkflowResult<unknown>): "success" | "failed" | "canceled" {
  return result.kind;
}

/** A journal entry's stored outcome. */
export function storedOutcome(e: StepRow): StepOutcome | null {
  return e.outcome === null ? null : (JSON.parse(e.outcome) as StepOutcome);
}

/** "cancel" or "timeout" when the run's own cancel or timeout ended the entry; else undefined. */
export function endedByRun(e: StepRow): string | undefined {
  return (storedOutcome(e) as { by?: string } | null)?.by;
}

/** The size of `entries` as the run's journal counts it: their args, and the outcomes given to the function. */
export function journalBytesOf(entries: readonly StepRow[]): number {
  return entries.reduce((sum, e) => sum + (e.args?.length ?? 0) + (e.delivered === null ? 0 : (e.outcome?.length ?? 0)), 0);
}

/** A run's status as status() returns it. */
export function toStatus(run: RunRow): WorkflowStatus {
  const status: WorkflowStatus = {
    workflowId: run.id,
    name: run.name,
    state: run.state === "canceling" ? "running" : run.state,
    cancelRequested: run.state === "canceling",
    steps: run.steps,
    parentId: run.parentId,
    version: run.version,
    createdAt: run.createdAt,
    finishedAt: run.finishedAt,
  };
  if (run.result !== null) {
    const result = JSON.parse(run.result) as WorkflowResult;
    if (result.kind === "success") status.result = result.returnValue;
    else if (result.kind === "failed") status.error = result.error;
  }
  if (run.blocked !== null) status.blocked = JSON.parse(run.blocked) as BlockedInfo;
  return status;
}

/** A journal entry as steps() returns it. */
export function toStepInfo(e: StepRow): WorkflowStepInfo {
  const info = entryInfo(e);
  const outcome = storedOutcome(e);
  const step: WorkflowStepInfo = {
    n: e.n,
    kind: info.kind,
    name: e.name,
    state: e.state === "done" ? "success" : e.state,
    startedAt: e.startedAt,
    finishedAt: e.finishedAt,
  };
  if (e.args !== null) step.args = JSON.parse(e.args) as JsonValue;
  if (outcome?.kind === "success" && e.kind !== "sleep") step.result = outcome.value ?? null;
  else if (outcome?.kind === "event") step.result = { kind: "event", value: outcome.value };
  else if (outcome?.kind === "timeout") step.result = { kind: "timeout" };
  else if (outcome?.kind === "failed") step.error = outcome.error;
  else if (outcome?.kind === "canceled" && outcome.message) step.error = outcome.message;
  if (e.workId !== null) step.workId = e.workId as WorkId;
  if (e.childId !== null) step.childId = e.childId;
  return step;
}
