/**
 * Text the `workpool` command may write to a terminal. Whatever comes from the store
 * (names, keys, args, errors, stacks) may hold control characters that a terminal would
 * obey: clear the screen, set the title, forge table rows. Output writes only
 * {@link Shown} text, which only this module's functions make, each escaping what it is
 * given: the compiler keeps unescaped text from reaching a stream.
 */
import pc from "picocolors";

/** C0 controls, DEL and C1 controls; and the same but the line feed, for text whose line breaks are layout. */
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;
// eslint-disable-next-line no-control-regex
const CONTROLS_BUT_NEWLINE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g;
const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function visible(c: string): string {
  return NAMED[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`;
}

/**
 * `text` with every control character written out as printable text: `\n`, `\r`, `\t`,
 * else `\xHH` (ESC is `\x1b`, so no escape sequence survives). With `keepNewlines`, line
 * feeds stay (a stack, a multi-line message); everything else is escaped.
 */
export function escapeControls(text: string, keepNewlines = false): string {
  return text.replace(keepNewlines ? CONTROLS_BUT_NEWLINE : CONTROLS, visible);
}

/** Wraps text this module has escaped or built from escaped parts (set by Shown's static block). */
let make!: (text: string) => Shown;

/** Text safe to write to a terminal: made only by this module's functions. */
export class Shown {
  private constructor(readonly text: string) {}

  static {
    make = (text) => new Shown(text);
  }
}

/** Anything a formatter takes: text to escape, or text already shown safe. */
export type Printable = string | number | Shown;

/** `value` as shown text: strings and numbers escaped on one line, Shown as it is. */
export function shown(value: Printable): Shown {
  return value instanceof Shown ? value : make(escapeControls(String(value)));
}

/** `text` escaped, keeping its line breaks (stacks, multi-line messages). */
export function multiline(text: string): Shown {
  return make(escapeControls(text, true));
}

/**
 * A template whose literal parts are the program's own text and whose values are escaped
 * (strings and numbers on one line; Shown values kept): t`paused pool "${pool}"`.
 */
export function t(strings: TemplateStringsArray, ...values: readonly Printable[]): Shown {
  let text = strings[0]!;
  values.forEach((v, i) => (text += shown(v).text + strings[i + 1]!));
  return make(text);
}

/** The parts, each escaped unless already shown, with the program's own `separator` between them. */
export function joinShown(parts: readonly Printable[], separator: string): Shown {
  return make(parts.map((p) => shown(p).text).join(separator));
}

/** `text` without trailing whitespace (removing it adds no control character). */
export function trimEnd(text: Shown): Shown {
  return make(text.text.trimEnd());
}

/** The styles the command uses. Each escapes what it is given, then colours it (when colour is on). */
export interface Colors {
  red(text: Printable): Shown;
  green(text: Printable): Shown;
  yellow(text: Printable): Shown;
  cyan(text: Printable): Shown;
  dim(text: Printable): Shown;
  bold(text: Printable): Shown;
}

/** The styles, with picocolors' colour codes when `enabled`. */
export function colors(enabled: boolean): Colors {
  const c = pc.createColors(enabled);
  const style =
    (fn: (s: string) => string) =>
    (text: Printable): Shown =>
      make(fn(shown(text).text));
  return { red: style(c.red), green: style(c.green), yellow: style(c.yellow), cyan: style(c.cyan), dim: style(c.dim), bold: style(c.bold) };
}

/**
 * `value` as JSON, indented by `indent` spaces (0: on one line). JSON.stringify escapes C0
 * controls; DEL and C1 controls are escaped too (`\u009b`), so the text is still JSON with
 * the same value and holds no control character a terminal would obey.
 */
export function jsonText(value: unknown, indent = 2): Shown {
  const text = JSON.stringify(value, null, indent) ?? "null";
  return make(text.replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`));
}
