/**
 * The trace of a run: one short line per step, kept in a ring so a failure prints the
 * steps that led to it. Work ids are shown as w1, w2... in the order the run met them.
 */

/** The trace of one run. */
export class Trace {
  private readonly lines: string[] = [];
  private readonly names = new Map<string, string>();
  private readonly runs = new Map<string, string>();

  constructor(private readonly keep = 60) {}

  /** Adds a line. */
  add(line: string): void {
    this.lines.push(line);
    if (this.lines.length > this.keep) this.lines.shift();
  }

  /** The short name of a work id. */
  label(id: string): string {
    let name = this.names.get(id);
    if (!name) this.names.set(id, (name = `w${this.names.size + 1}`));
    return name;
  }

  /** The short name of a workflow run id (r1, r2...; a child run as its parent's name and step, r1/3). */
  runLabel(id: string): string {
    let name = this.runs.get(id);
    if (!name) {
      const slash = id.lastIndexOf("/");
      name = slash > 0 ? `${this.runLabel(id.slice(0, slash))}/${id.slice(slash + 1)}` : `r${this.runs.size + 1}`;
      this.runs.set(id, name);
    }
    return name;
  }

  /** `text` with every run and work id it names shown by its label (ids are random; labels replay alike). */
  shown(text: string): string {
    let out = text;
    for (const [id, name] of [...this.runs, ...this.names]) if (out.includes(id)) out = out.split(id).join(name);
    return out;
  }

  /** Ids named so far, in order. */
  ids(): string[] {
    return [...this.names.keys()];
  }

  /** The kept lines. */
  tail(): string[] {
    return [...this.lines];
  }
}

/** The trace's text for a pool's log message worth keeping (a late result ignored, a lease lost, a rescue), or null. */
export function logLine(message: string, label: (id: string) => string): { text: string; late: boolean } | null {
  const m = /ignoring the result of (\w+) attempt (\d+)|lost the lease of (\w+) attempt (\d+)|rescued (\d+) attempt/.exec(message);
  if (!m) return null;
  if (m[1]) return { text: `ignored the late result of ${label(m[1])}#${m[2]}`, late: true };
  return { text: m[3] ? `lost the lease of ${label(m[3])}#${m[4]}` : `rescued ${m[5]}`, late: false };
}
