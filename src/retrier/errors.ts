/**
 * Errors specific to {@link ActionRetrier}. Bad input still throws the library's
 * InvalidArgumentError; these two are about the state of a run.
 */

/** No run with this id exists (never started, its start rolled back, or it was deleted). */
export class UnknownRunError extends Error {
  /** The id that was not found. */
  readonly runId: string;

  constructor(runId: string) {
    super(
      `workpool: runId: no run with id "${runId}" exists: it was never started, its start rolled back, ` +
        "or it completed and was deleted (by cleanup(), or 7 days after it completed)",
    );
    this.name = "UnknownRunError";
    this.runId = runId;
  }
}

/** `cleanup(runId)` was called on a run that cannot be deleted yet. */
export class RunNotCompletedError extends Error {
  /** The run that is not completed. */
  readonly runId: string;

  constructor(runId: string, why: string) {
    super(`workpool: cleanup: run "${runId}" cannot be deleted: ${why}`);
    this.name = "RunNotCompletedError";
    this.runId = runId;
  }
}
