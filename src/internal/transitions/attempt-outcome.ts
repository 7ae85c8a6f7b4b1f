/**
 * How one attempt ended, as the worker reports it (before the outcome rule decides what
 * it does to the work): a type of its own, so the tracing reads it without the rule.
 */
import type { ErrorDetail } from "../../error-text.js";
import type { JsonValue } from "../../types.js";

/**
 * How one attempt ended, as seen by the worker that ran it. A failure's `detail` holds the
 * name and stack of the Error the handler threw, for the attempt's record.
 */
export type AttemptOutcome =
  | { kind: "success"; returnValue: unknown }
  | { kind: "failed"; error: string; retryable: boolean; detail?: ErrorDetail; errorData?: JsonValue }
  | { kind: "canceled" };
