/**
 * The `workpool` command's exit codes (documented in docs/operations.md), and the error a
 * command throws to end with one of them.
 */

/** Exit codes: each says what a script can do next. */
export const EXIT = {
  /** Done. */
  ok: 0,
  /** An unexpected error (a bug, or a store that refused the request). */
  error: 1,
  /** Bad command line: unknown command or option, bad value, an id not in work-id format, retry-all off a terminal without --yes. Nothing was done. */
  usage: 2,
  /** A work id, pool or database that does not exist (with several ids: the first that was not done; the others were). */
  notFound: 3,
  /**
   * A target exists but the action does not apply to it (cancel finished work, retry
   * successful or already retried work, resume a pool that is not paused); with several
   * ids, the first that was not done, and the others were.
   */
  notApplicable: 4,
  /** The store could not be reached (connection refused, timed out, locked). Try again later. */
  unreachable: 5,
  /** A destructive command was declined at its confirmation prompt. Nothing was done. */
  declined: 6,
} as const;

/** An exit code of {@link EXIT}. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error whose message is shown as is and whose code the command exits with. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code: ExitCode,
  ) {
    super(message);
    this.name = "CliError";
  }
}
