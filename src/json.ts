/**
 * Strict JSON encoding of args, context and return values. JSON.stringify silently turns
 * NaN into null, drops functions and turns Dates into strings; a durable queue must not
 * change a payload between enqueue and run, so anything that would not survive a
 * round trip is rejected with the path of the offending value.
 */
import { InvalidArgumentError } from "./errors.js";

/** Largest encoded payload (UTF-8 bytes of its JSON) accepted for args or context. */
export const MAX_PAYLOAD_BYTES = 1024 * 1024;

/** Deepest nesting accepted; deeper values are almost always a bug or an attack. */
const MAX_DEPTH = 64;

function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "object") {
    const ctor = Object.getPrototypeOf(value)?.constructor?.name;
    return ctor ? `a ${ctor}` : "an object";
  }
  return typeof value === "bigint" ? "a BigInt" : `a ${typeof value}`;
}

function check(path: string, value: unknown, seen: Set<object>, depth: number): void {
  switch (typeof value) {
    case "string":
    case "boolean":
      return;
    case "number":
      if (!Number.isFinite(value)) {
        throw new InvalidArgumentError(path, `${value} is not JSON (only finite numbers are)`);
      }
      return;
    case "object":
      break;
    default:
      throw new InvalidArgumentError(path, `${describe(value)} is not JSON; pass plain data (objects, arrays, strings, finite numbers, booleans, null)`);
  }
  if (value === null) return;
  if (depth > MAX_DEPTH) throw new InvalidArgumentError(path, `nested deeper than ${MAX_DEPTH} levels`);
  if (seen.has(value)) throw new InvalidArgumentError(path, "is a cycle (an object that contains itself); JSON cannot represent it");
  seen.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (!(i in value) || value[i] === undefined) {
        throw new InvalidArgumentError(`${path}[${i}]`, "undefined (or a hole) in an array is not JSON; use null");
      }
      check(`${path}[${i}]`, value[i], seen, depth + 1);
    }
  } else {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      throw new InvalidArgumentError(path, `${describe(value)} is not plain JSON; convert it (for a Date, use getTime() or toISOString())`);
    }
    if (Object.getOwnPropertySymbols(value).length > 0) {
      throw new InvalidArgumentError(path, "has symbol keys, which JSON cannot represent");
    }
    for (const [key, v] of Object.entries(value)) {
      // An undefined property is simply absent in JSON, as in TypeScript's optional fields.
      if (v === undefined) continue;
      check(`${path}.${key}`, v, seen, depth + 1);
    }
  }
  seen.delete(value);
}

/**
 * Validates `value` as JSON and returns its encoding. `field` names it in errors
 * (`args`, `context`, `args.user`). Throws {@link InvalidArgumentError}.
 */
export function encodeJson(field: string, value: unknown, maxBytes: number = MAX_PAYLOAD_BYTES): string {
  if (value === undefined) throw new InvalidArgumentError(field, "undefined is not JSON; pass null or an object");
  check(field, value, new Set(), 0);
  const text = JSON.stringify(value);
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > maxBytes) {
    throw new InvalidArgumentError(field, `is ${bytes} bytes as JSON; the limit is ${maxBytes} bytes (store large data elsewhere and pass a reference)`);
  }
  return text;
}

/** Encodes an optional value: undefined stays null (absent). */
export function encodeOptionalJson(field: string, value: unknown): string | null {
  return value === undefined ? null : encodeJson(field, value);
}

/** Parses a stored payload; null (absent) becomes undefined. */
export function decodeJson(text: string | null): unknown {
  return text === null ? undefined : JSON.parse(text);
}
