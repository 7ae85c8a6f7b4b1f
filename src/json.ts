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

/**
 * The path of the value being checked, as a stack of keys: the error message needs it,
 * the common case (valid data) does not, so the string is built only on error.
 */
class JsonPath {
  private readonly keys: (string | number)[] = [];
  constructor(private readonly root: string) {}
  push(key: string | number): void {
    this.keys.push(key);
  }
  pop(): void {
    this.keys.pop();
  }
  /** `root`, `root.key`, `root[3]`, `root.list[0].name`. */
  toString(): string {
    let out = this.root;
    for (const k of this.keys) out += typeof k === "number" ? `[${k}]` : `.${k}`;
    return out;
  }
}

function check(path: JsonPath, value: unknown, seen: Set<object>, depth: number): void {
  switch (typeof value) {
    case "string":
    case "boolean":
      return;
    case "number":
      if (!Number.isFinite(value)) {
        throw new InvalidArgumentError(String(path), `${value} is not JSON (only finite numbers are)`);
      }
      if (value === 0 && 1 / value < 0) throw new InvalidArgumentError(String(path), "-0 is not JSON (it would come back as 0); pass 0");
      return;
    case "object":
      break;
    default:
      throw new InvalidArgumentError(
        String(path),
        `${describe(value)} is not JSON; pass plain data (objects, arrays, strings, finite numbers, booleans, null)`,
      );
  }
  if (value === null) return;
  if (depth > MAX_DEPTH) throw new InvalidArgumentError(String(path), `nested deeper than ${MAX_DEPTH} levels`);
  if (seen.has(value))
    throw new InvalidArgumentError(String(path), "is a cycle (an object that contains itself); JSON cannot represent it");
  seen.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      if (!(i in value) || value[i] === undefined) {
        throw new InvalidArgumentError(String(path), "undefined (or a hole) in an array is not JSON; use null");
      }
      check(path, value[i], seen, depth + 1);
      path.pop();
    }
    // Named properties of an array (and symbol keys) are silently dropped by JSON.
    if (Reflect.ownKeys(value).length !== value.length + 1) {
      const extra = Reflect.ownKeys(value).find((k) => k !== "length" && !(typeof k === "string" && /^(0|[1-9]\d*)$/.test(k)));
      throw new InvalidArgumentError(String(path), `is an array with the property ${String(extra)}, which JSON drops; use an object`);
    }
  } else {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      throw new InvalidArgumentError(
        String(path),
        `${describe(value)} is not plain JSON; convert it (for a Date, use getTime() or toISOString())`,
      );
    }
    if (Object.getOwnPropertySymbols(value).length > 0) {
      throw new InvalidArgumentError(String(path), "has symbol keys, which JSON cannot represent");
    }
    for (const key of Object.keys(value)) {
      const v = (value as Record<string, unknown>)[key];
      // An undefined property is simply absent in JSON, as in TypeScript's optional fields.
      if (v === undefined) continue;
      path.push(key);
      check(path, v, seen, depth + 1);
      path.pop();
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
  check(new JsonPath(field), value, new Set(), 0);
  const text = JSON.stringify(value);
  // A UTF-16 code unit takes at most 3 bytes in UTF-8: short texts need no counting.
  const bytes = text.length * 3 <= maxBytes ? 0 : Buffer.byteLength(text, "utf8");
  if (bytes > maxBytes) {
    throw new InvalidArgumentError(
      field,
      `is ${bytes} bytes as JSON; the limit is ${maxBytes} bytes (store large data elsewhere and pass a reference)`,
    );
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
