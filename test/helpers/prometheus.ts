/**
 * A small reader of Prometheus text exposition for tests: every sample line as
 * `name{label="value",...}` (labels sorted) mapped to its value, and the metric types.
 */

/** The samples and `# TYPE` lines of an exposition. */
export interface Exposition {
  /** Keyed by `name` or `name{a="x",b="y"}` with labels in name order. */
  samples: Map<string, number>;
  types: Map<string, string>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses `text`; throws on a line that is neither a comment nor a sample. */
export function parseExposition(text: string): Exposition {
  const samples = new Map<string, number>();
  const types = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    if (line.startsWith("#")) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type) types.set(type[1]!, type[2]!);
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels = [...(m[2] ?? "").matchAll(LABEL)].map((l) => `${l[1]}="${l[2]}"`).sort();
    samples.set(labels.length ? `${m[1]}{${labels.join(",")}}` : m[1]!, Number(m[3]));
  }
  return { samples, types };
}
