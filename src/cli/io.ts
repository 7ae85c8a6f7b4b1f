/**
 * Where the `workpool` command reads and writes: its streams, whether a person is at a
 * terminal (colours and confirmation prompts only then), and its environment.
 */
import { createInterface } from "node:readline/promises";
import pc from "picocolors";

/** The colour functions of picocolors (identity functions when colour is off). */
export type Colors = ReturnType<typeof pc.createColors>;

/** The streams and environment of one run of the command. */
export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

/** Output helpers over an {@link Io}. */
export class Output {
  /** Colours: only when stdout is a terminal and NO_COLOR is not set. */
  readonly color: Colors;

  constructor(readonly io: Io) {
    this.color = pc.createColors(io.stdout.isTTY === true && io.env.NO_COLOR === undefined);
  }

  /** Whether a person is at a terminal on both ends (prompts, screen clearing). */
  get interactive(): boolean {
    return this.io.stdout.isTTY === true && this.io.stdin.isTTY === true;
  }

  /** Writes `text` and a newline to stdout. */
  line(text = ""): void {
    this.io.stdout.write(`${text}\n`);
  }

  /** Writes `value` as indented JSON to stdout. */
  json(value: unknown): void {
    this.io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** Writes a message to stderr. */
  note(text: string): void {
    this.io.stderr.write(`${text}\n`);
  }

  /**
   * Asks `question` on a terminal and resolves true for "y" / "yes". Off a terminal (a
   * script, a pipe) nothing is asked and it resolves true: scripts pass `--yes` by habit
   * but need not.
   */
  async confirm(question: string): Promise<boolean> {
    if (!this.interactive) return true;
    const rl = createInterface({ input: this.io.stdin, output: this.io.stdout });
    try {
      const answer = await rl.question(`${question} [y/N] `);
      return /^y(es)?$/i.test(answer.trim());
    } finally {
      rl.close();
    }
  }
}
