/**
 * Errors workpool throws at callers. Each names the offending field so a caller can tell
 * exactly what to fix; none of them is thrown after anything was written.
 */

/** Bad input: an option, argument or payload outside what is allowed. */
export class InvalidArgumentError extends TypeError {
  /** The option or argument at fault, e.g. `maxParallelism` or `args.user.createdAt`. */
  readonly field: string;

  constructor(field: string, message: string) {
    super(`workpool: ${field}: ${message}`);
    this.name = "InvalidArgumentError";
    this.field = field;
  }
}

/** A well-formed work id that this store never had (for example, its transaction rolled back). */
export class UnknownWorkError extends Error {
  /** The id that was not found. */
  readonly workId: string;

  constructor(workId: string) {
    super(`workpool: id: no work with id "${workId}" exists in this pool (it was never enqueued, or its enqueue transaction rolled back)`);
    this.name = "UnknownWorkError";
    this.workId = workId;
  }
}
