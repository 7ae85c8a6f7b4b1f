/**
 * The errors a workflow function sees at its awaits, and the errors of the manager's calls.
 */
import type { JsonValue } from "../types.js";

/** Thrown at a workflow's current await when the run is canceled (or its timeout passed): `finally` may still run steps. */
export class WorkflowCanceledError extends Error {
  constructor(message = "the workflow was canceled") {
    super(message);
    this.name = "WorkflowCanceledError";
  }
}

/** A step's work failed (or was canceled by itself): the error the step's await rejects with. */
export class StepFailedError extends Error {
  /** The `errorData` the step's work failed with (WorkError), if any. */
  readonly data: JsonValue | undefined;
  constructor(
    message: string,
    /** The step's position in the journal. */
    readonly step: number,
    /** "failed", or "canceled" when the step's work was canceled on its own. */
    readonly kind: "failed" | "canceled",
    data?: JsonValue,
  ) {
    super(message);
    this.name = "StepFailedError";
    this.data = data;
  }
}

/** A run id that the store does not have. */
export class UnknownWorkflowError extends Error {
  constructor(readonly workflowId: string) {
    super(`workpool: no workflow run with id ${JSON.stringify(workflowId)}`);
    this.name = "UnknownWorkflowError";
  }
}
