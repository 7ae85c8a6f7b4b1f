/**
 * What a batch handler's answer means for each of its items: one result per item (an
 * Error fails that item alone), a throw fails every item, and an answer of the wrong
 * shape fails every item with a BatchResultError, not retried (the handler's code is at
 * fault, and running it again gives the same answer).
 */
import { encodeJson } from "../json.js";
import { errorText } from "../error-text.js";
import { isNonRetryable } from "../retry.js";
import { thrownOutcome } from "./executor.js";
import type { AttemptOutcome } from "./transitions/outcome.js";

/** The failure of every item of a batch whose handler answered with the wrong number of results, or not with an array. */
export class BatchResultError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BatchResultError";
  }
}

/** The outcome of every item of a batch whose handler threw `e`. */
export function thrownByBatch(e: unknown): AttemptOutcome {
  return thrownOutcome(e, !isNonRetryable(e));
}

/** The outcomes of `size` items, in order, from what the handler named `name` returned. */
export function batchOutcomes(name: string, results: unknown, size: number): AttemptOutcome[] {
  if (!Array.isArray(results) || results.length !== size) {
    const got = Array.isArray(results) ? `${results.length} result${results.length === 1 ? "" : "s"}` : describe(results);
    const error = new BatchResultError(
      `batch action "${name}" returned ${got} for ${size} item${size === 1 ? "" : "s"}; it must return an array of one result (or Error) per item, in order`,
    );
    return new Array<AttemptOutcome>(size).fill(thrownOutcome(error, false));
  }
  return results.map(itemOutcome);
}

function itemOutcome(value: unknown): AttemptOutcome {
  if (value instanceof Error) return thrownByBatch(value);
  try {
    if (value !== undefined) encodeJson("returnValue", value);
    return { kind: "success", returnValue: value };
  } catch (e) {
    return { kind: "failed", error: `the batch action's ${errorText(e).replace(/^workpool: /, "")}`, retryable: false };
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "object") return "an object that is not an array";
  return `a ${typeof value}`;
}
