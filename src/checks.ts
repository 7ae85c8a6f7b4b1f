/**
 * The value checks every option and argument goes through: each throws an
 * InvalidArgumentError that names the field and the allowed values.
 */
import { InvalidArgumentError } from "./errors.js";

/** Checks an integer option in [min, max]. */
export function checkInt(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(field, `must be an integer from ${min} to ${max}, got ${describeValue(value)}`);
  }
  return value;
}

/** Checks a finite number option >= min. */
export function checkNumber(field: string, value: unknown, min: number): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < min) {
    throw new InvalidArgumentError(field, `must be a finite number >= ${min}, got ${describeValue(value)}`);
  }
  return value;
}

/** Short printable form of a bad value for error messages. */
export function describeValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? value.slice(0, 40) + "…" : value);
  if (typeof value === "bigint") return `${value}n (a BigInt)`;
  if (typeof value === "function") return "a function";
  if (value !== null && typeof value === "object") return Array.isArray(value) ? "an array" : "an object";
  return String(value);
}

/**
 * Checks that `value` is an options object whose own keys are all in `allowed`, and
 * returns it. Keys inherited through a prototype are refused as well: they would be read
 * as options although the caller never wrote them. `prefix` goes before key names in
 * errors (`retry.`); `what` names the call (`new Workpool()`); `unknown` replaces the
 * message for a key that is not allowed.
 */
export function checkOptionKeys(
  field: string,
  value: unknown,
  allowed: readonly string[],
  what: string,
  prefix = "",
  unknown?: string,
): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(field, `must be an object of options for ${what}, got ${describeValue(value)}`);
  }
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) {
      throw new InvalidArgumentError(
        `${prefix}${key}`,
        "is inherited through the options object's prototype; pass options as the object's own properties",
      );
    }
    if (!allowed.includes(key)) {
      throw new InvalidArgumentError(`${prefix}${key}`, unknown ?? `is not an option of ${what}; allowed: ${allowed.join(", ")}`);
    }
  }
  return value as Record<string, unknown>;
}

/** Validates a handler or pool name. */
export function checkName(field: string, value: unknown, max = 100): string {
  if (typeof value !== "string" || value.length === 0 || value.length > max || !/^[A-Za-z0-9_.:\-/]+$/.test(value)) {
    throw new InvalidArgumentError(field, `must be 1 to ${max} characters of letters, digits and _ . : - /, got ${describeValue(value)}`);
  }
  return value;
}
