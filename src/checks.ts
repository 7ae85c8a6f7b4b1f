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

// A brand that exists only in the types: no array literal has it, only optionKeys() gives it.
declare const checkedKeys: unique symbol;

/** Every key of `T` (of each of its members, when `T` is a union). */
export type OptionKey<T> = T extends unknown ? Extract<keyof T, string> : never;

/** The allowed keys of an options object, as optionKeys() makes them: the list checkOptionKeys() takes. */
export type OptionKeys<K extends string = string> = readonly K[] & { readonly [checkedKeys]: true };

/**
 * The option keys of the type `T`, as a list for checkOptionKeys():
 * `optionKeys<StopOptions>()({ timeoutMs: true })`. The object must name every key of `T`
 * and nothing else, so an option added to a type fails to compile until its list has it.
 * The list keeps the object's order (error messages show it).
 */
export function optionKeys<T>(): (keys: { readonly [K in OptionKey<T>]-?: true }) => OptionKeys<OptionKey<T>> {
  return (keys) => Object.freeze(Object.keys(keys)) as readonly string[] as OptionKeys<OptionKey<T>>;
}

/**
 * Checks that `value` is an options object whose own keys are all in `allowed` (a list
 * from optionKeys(), so checked against the options' type), and returns it. Keys inherited through a prototype are refused as well: they would be read
 * as options although the caller never wrote them. `prefix` goes before key names in
 * errors (`retry.`); `what` names the call (`new Workpool()`); `unknown` replaces the
 * message for a key that is not allowed.
 */
export function checkOptionKeys<K extends string>(
  field: string,
  value: unknown,
  allowed: OptionKeys<K>,
  what: string,
  prefix = "",
  unknown?: string,
): { [P in K]?: unknown } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(field, `must be an object of options for ${what}, got ${describeValue(value)}`);
  }
  const keys: readonly string[] = allowed;
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) {
      throw new InvalidArgumentError(
        `${prefix}${key}`,
        "is inherited through the options object's prototype; pass options as the object's own properties",
      );
    }
    if (!keys.includes(key)) {
      throw new InvalidArgumentError(`${prefix}${key}`, unknown ?? `is not an option of ${what}; allowed: ${allowed.join(", ")}`);
    }
  }
  return value as { [P in K]?: unknown };
}

/** Validates a handler or pool name. */
export function checkName(field: string, value: unknown, max = 100): string {
  if (typeof value !== "string" || value.length === 0 || value.length > max || !/^[A-Za-z0-9_.:\-/]+$/.test(value)) {
    throw new InvalidArgumentError(field, `must be 1 to ${max} characters of letters, digits and _ . : - /, got ${describeValue(value)}`);
  }
  return value;
}
