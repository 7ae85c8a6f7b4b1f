/**
 * Where the `workpool` command reads and writes: its streams, whether a person is at a
 * terminal (colours and confirmation prompts only then), and its environment. Everything
 * it writes is {@link Shown} text (see terminal-text.ts): escaped, so stored data cannot
 * drive the terminal.
 */
import { createInterface } from "node:readline/promises";
import { colors, jsonText, type Colors, type Shown } from "./terminal-text.js";

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

  constructor(private readonly io: Io) {
    this.color = colors(io.stdout.isTTY === true && io.env.NO_COLOR === undefined);
  }

  /** The environment of the run. */
  get env(): NodeJS.ProcessEnv {
    return this.io.env;
  }

  /** Whether a person is at a terminal on both ends (prompts, screen clearing). */
  get interactive(): boolean {
    return this.io.stdout.isTTY === true && this.io.stdin.isTTY === true;
  }

  /** Writes `text` and a newline to stdout. */
  line(text?: Shown): void {
    this.io.stdout.write(`${text?.text ?? ""}\n`);
  }

  /** Writes `text` as it is (it brings its own line ends) to stdout, or to stderr. */
  write(text: Shown, stream: "stdout" | "stderr" = "stdout"): void {
    this.io[stream].write(text.text);
  }

  /** Writes `value` as indented JSON to stdout. */
  json(value: unknown): void {
    this.line(jsonText(value));
  }

  /** Writes a message to stderr. */
  note(text: Shown): void {
    this.io.stderr.write(`${text.text}\n`);
  }

  /** Clears a terminal's screen and moves the cursor home (for --watch). */
  clearScreen(): void {
    if (this.interactive) this.io.stdout.write("\u001b[2J\u001b[H");
  }

  /**
   * Asks `question` on a terminal and resolves true for "y" / "yes". Off a terminal (a
   * script, a pipe) nothing is asked and it resolves true: scripts pass `--yes` by habit
   * but need not.
   */
  async confirm(question: Shown): Promise<boolean> {
    if (!this.interactive) return true;
    const rl = createInterface({ input: this.io.stdin, output: this.io.stdout });
    try {
      const answer = await rl.question(`${question.text} [y/N] `);
      return /^y(es)?$/i.test(answer.trim());
    } finally {
      rl.close();
    }
  }
}
