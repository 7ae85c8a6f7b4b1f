/**
 * Progress an action reports with `ctx.reportProgress(value)`: the value's check and
 * encoding. The worker keeps the last value of each attempt and writes it coalesced (see
 * attempt-output.ts).
 */
import { describeValue } from "../checks.js";
import { InvalidArgumentError } from "../errors.js";
import { encodeJson } from "../json.js";
import type { JsonValue } from "../types.js";

/** What an action may report as its progress: a percentage, or a small JSON object of its own shape. */
export type Progress = number | { [key: string]: JsonValue };

/** Largest progress object accepted, in UTF-8 bytes of its JSON. */
export const MAX_PROGRESS_BYTES = 4096;

const FIELD = "ctx.reportProgress(value)";

/** Checks a reported progress value and returns its JSON; throws {@link InvalidArgumentError} naming the call. */
export function encodeProgress(value: unknown): string {
  if (typeof value === "number") {
    if (!Number.isFinite(value) || value < 0 || value > 100) {
      throw new InvalidArgumentError(FIELD, `a number must be from 0 to 100, got ${describeValue(value)}`);
    }
    // -0 is the one number JSON would not bring back as given.
    return value === 0 ? "0" : JSON.stringify(value);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(FIELD, `must be a number from 0 to 100 or a JSON object, got ${describeValue(value)}`);
  }
  return encodeJson(FIELD, value, MAX_PROGRESS_BYTES);
}
