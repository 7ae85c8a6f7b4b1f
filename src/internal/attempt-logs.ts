/**
 * Log lines an action writes with `ctx.log.info|warn|error(message, fields?)`, kept per
 * attempt within bounds: the last {@link LOG_LINES_KEPT} lines and {@link LOG_BYTES_KEPT}
 * bytes; older lines are dropped and counted. Text is kept as given (control characters
 * included): whoever shows it escapes it for its medium.
 */
import { describeValue } from "../checks.js";
import { InvalidArgumentError } from "../errors.js";
import { encodeJson } from "../json.js";
import type { JsonValue } from "../types.js";

/** Levels of an attempt's log lines. */
export type AttemptLogLevel = "info" | "warn" | "error";

/** One stored log line of an attempt. */
export interface AttemptLogLine {
  /** When it was written (epoch ms, the pool's clock). */
  at: number;
  level: AttemptLogLevel;
  message: string;
  /** The JSON object passed with it, if any (dropped when over {@link LOG_FIELDS_MAX_BYTES}). */
  fields?: { [key: string]: JsonValue };
  /** Set when the line was cut: its message shortened or its fields dropped. */
  cut?: true;
}

/** The log of an action's attempt: `ctx.log`. Lines are kept with the attempt (see docs). */
export interface AttemptLog {
  /** Writes an info line. `fields`: a JSON object stored with it. */
  info(message: string, fields?: { [key: string]: JsonValue }): void;
  /** Writes a warning line. */
  warn(message: string, fields?: { [key: string]: JsonValue }): void;
  /** Writes an error line. */
  error(message: string, fields?: { [key: string]: JsonValue }): void;
}

/** Most lines kept per attempt: older ones are dropped. */
export const LOG_LINES_KEPT = 200;
/** Most bytes (UTF-8 of the lines' JSON) kept per attempt: older lines are dropped. */
export const LOG_BYTES_KEPT = 64 * 1024;
/** Longest message kept, in characters: a longer one is cut to this. */
export const LOG_MESSAGE_MAX_CHARS = 8192;
/** Largest fields object kept, in UTF-8 bytes of its JSON: larger fields are dropped from the line. */
export const LOG_FIELDS_MAX_BYTES = 8192;

/** Checks one call's message and fields and makes its line; throws {@link InvalidArgumentError} for a message that is not a string or fields that are not a JSON object. */
export function logLine(level: AttemptLogLevel, message: unknown, fields: unknown, at: number): AttemptLogLine {
  const call = `ctx.log.${level}`;
  if (typeof message !== "string") throw new InvalidArgumentError(`${call}(message)`, `must be a string, got ${describeValue(message)}`);
  const line: AttemptLogLine = { at, level, message };
  if (message.length > LOG_MESSAGE_MAX_CHARS) {
    line.message = message.slice(0, LOG_MESSAGE_MAX_CHARS);
    line.cut = true;
  }
  if (fields === undefined) return line;
  if (typeof fields !== "object" || fields === null || Array.isArray(fields)) {
    throw new InvalidArgumentError(`${call}(fields)`, `must be a JSON object, got ${describeValue(fields)}`);
  }
  // Not JSON is the caller's bug (an error); too large is only cut, as a long message is.
  const text = encodeJson(`${call}(fields)`, fields, Number.MAX_SAFE_INTEGER);
  if (text.length * 3 > LOG_FIELDS_MAX_BYTES && Buffer.byteLength(text, "utf8") > LOG_FIELDS_MAX_BYTES) line.cut = true;
  else line.fields = JSON.parse(text) as { [key: string]: JsonValue };
  return line;
}

/** One attempt's kept lines, within the bounds, and how many earlier ones were dropped. */
export class AttemptLogBuffer {
  private readonly lines: { line: AttemptLogLine; json: string; bytes: number }[] = [];
  private bytes = 0;
  /** Earlier lines dropped to keep within the bounds. */
  dropped = 0;

  /** Adds a line, dropping the oldest while over the bounds. */
  add(line: AttemptLogLine): void {
    const json = JSON.stringify(line);
    const bytes = Buffer.byteLength(json, "utf8");
    this.lines.push({ line, json, bytes });
    this.bytes += bytes;
    while (this.lines.length > LOG_LINES_KEPT || (this.bytes > LOG_BYTES_KEPT && this.lines.length > 1)) {
      this.bytes -= this.lines.shift()!.bytes;
      this.dropped++;
    }
  }

  /** The kept lines as one JSON array, oldest first. */
  toJson(): string {
    return `[${this.lines.map((l) => l.json).join(",")}]`;
  }
}
