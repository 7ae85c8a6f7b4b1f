/**
 * Turns whatever a handler throws (or a store reports) into a string that can always be
 * stored and logged. Handlers may throw anything: a string, a plain object, an Error
 * whose `message` getter throws, a null-prototype object that cannot be converted to a
 * string. Reading such a value must never fail the write that records the failure.
 */

/** Longest error text kept, in UTF-16 code units; a longer one is cut and marked. */
export const MAX_ERROR_TEXT = 16 * 1024;

/** Reads `fn()`, or undefined if reading throws. */
function attempt<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

/** The `typeof` of a value, or its constructor's name when it has a readable one. */
function kindOf(e: unknown): string {
  if (e === null) return "null";
  if (typeof e !== "object" && typeof e !== "function") return typeof e;
  const name = attempt(() => (Object.getPrototypeOf(e) as { constructor?: { name?: unknown } } | null)?.constructor?.name);
  return typeof name === "string" && name ? name : typeof e;
}

function fromError(e: Error): string | undefined {
  const message = attempt(() => e.message);
  if (typeof message === "string" && message) return message;
  const name = attempt(() => e.name);
  if (typeof name === "string" && name) return typeof message === "string" ? name : `${name} (its message could not be read)`;
  return undefined;
}

function fromValue(e: unknown): string | undefined {
  if (typeof e === "string") return e;
  if (typeof e === "object" && e !== null) {
    const json = attempt(() => JSON.stringify(e));
    if (typeof json === "string") return json;
    return undefined;
  }
  return attempt(() => String(e));
}

/**
 * Removes what no store can hold (NUL characters, which PostgreSQL text rejects) and
 * caps the length, so the text can be written as is.
 */
export function storableText(text: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.includes("\u0000") ? text.replace(/\u0000/g, "") : text;
  return clean.length > MAX_ERROR_TEXT ? `${clean.slice(0, MAX_ERROR_TEXT)}… (cut at ${MAX_ERROR_TEXT} characters)` : clean;
}

/**
 * The message of a thrown value, as stored in a failed result and in logs. Never throws:
 * an Error gives its message (or its name), a string itself, other values their JSON or
 * string form, and anything unreadable `unprintable thrown value (<kind>)`.
 */
export function errorText(e: unknown): string {
  const text = attempt(() => (e instanceof Error ? fromError(e) : fromValue(e)));
  return storableText(text ?? `unprintable thrown value (${kindOf(e)})`);
}

/** Longest stack kept in an attempt's record, in UTF-16 code units. */
export const MAX_STACK_TEXT = 8 * 1024;

/** What an attempt's record keeps of a thrown Error beyond its message. */
export interface ErrorDetail {
  name?: string;
  stack?: string;
}

/**
 * Where workpool's internals are (the executor that calls handlers): their stack frames are
 * the same for every handler's error. Bundled into one file with the app, no frame is there.
 */
const OWN_CODE = new URL("./internal/", import.meta.url).href;

/**
 * A stack without the frames of workpool's own code (the executor that called the
 * handler) and of Node's internals: what is left is the handler's.
 */
function handlerFrames(stack: string): string {
  if (!stack.includes(OWN_CODE) && !stack.includes("(node:internal/")) return stack;
  return stack
    .split("\n")
    .filter((line) => !(/^\s+at /.test(line) && (line.includes(OWN_CODE) || line.includes("(node:internal/"))))
    .join("\n");
}

/**
 * The name and stack of a thrown Error, storable (the stack without workpool's and Node's
 * own frames, and cut at MAX_STACK_TEXT); empty for anything else. Never throws: a getter
 * that throws, or a value that is not a string, leaves that field out.
 */
export function errorDetail(e: unknown): ErrorDetail {
  const detail: ErrorDetail = {};
  if (!attempt(() => e instanceof Error)) return detail;
  const name = attempt(() => (e as Error).name);
  if (typeof name === "string" && name) detail.name = storableText(name.slice(0, 200));
  const stack = attempt(() => (e as Error).stack);
  if (typeof stack === "string" && stack) {
    const clean = storableText(handlerFrames(stack));
    detail.stack = clean.length > MAX_STACK_TEXT ? `${clean.slice(0, MAX_STACK_TEXT)}… (cut)` : clean;
  }
  return detail;
}
