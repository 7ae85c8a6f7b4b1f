/**
 * Input checks of the workflow API: ids, names, events, options. Each error names the
 * field and what is allowed; nothing is written before they pass.
 */
import { checkInt, checkName, describeValue } from "../checks.js";
import { InvalidArgumentError } from "../errors.js";
import { YEAR } from "../options.js";

/** Longest workflow id, in characters. */
export const MAX_WORKFLOW_ID = 200;

/** A workflow id: 1 to 200 characters of letters, digits and _ . : - / (ids made by start() fit too). */
export function checkWorkflowId(field: string, value: unknown): string {
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_WORKFLOW_ID || !/^[A-Za-z0-9_.:\-/]+$/.test(value)) {
    throw new InvalidArgumentError(
      field,
      `must be 1 to ${MAX_WORKFLOW_ID} characters of letters, digits and _ . : - /, got ${describeValue(value)}`,
    );
  }
  return value;
}

/** An event name: 1 to 200 characters of letters, digits and _ . : - /. */
export function checkEventName(field: string, value: unknown): string {
  return checkName(field, value, 200);
}

/** A workflow's timeout: 1 ms to a year. */
export function checkTimeoutMs(field: string, value: unknown): number {
  return checkInt(field, value, 1, YEAR);
}
