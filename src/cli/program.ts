/**
 * The `workpool` command line: global options, the commands (commands/index.ts), and how
 * a run ends: every error becomes a message on stderr and an exit code (exit-codes.ts).
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError, Option } from "commander";
import { InvalidArgumentError, UnknownWorkError } from "../errors.js";
import { errorText } from "../error-text.js";
import { Cli } from "./cli.js";
import { COMMANDS } from "./commands/index.js";
import { CliError, EXIT, type ExitCode } from "./exit-codes.js";
import type { Io } from "./io.js";
import { multiline, t } from "./terminal-text.js";

/** The package's version, for --version (package.json is two levels above this module, in src/ and in dist/). */
const VERSION = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

const HELP_AFTER = `
Read commands take --json; destructive ones ask first on a terminal unless --yes.
Exit codes: 0 done, 1 error, 2 bad command line, 3 not found, 4 not applicable
(e.g. cancel of finished work), 5 store unreachable, 6 declined at the prompt.
With several ids, each is acted on and reported; the code is the first failure's.`;

/** The program with every command registered. */
export function buildProgram(cli: Cli): Command {
  const program = new Command("workpool")
    .description("Operate workpool stores: pools, work, retries, limits and metrics, with no handler loaded.")
    .version(VERSION)
    .addOption(
      new Option(
        "--db <file.db | postgres://…>",
        "the store: an SQLite file or a PostgreSQL URL (default: WORKPOOL_DB, then DATABASE_URL)",
      ),
    )
    .addOption(new Option("--schema <name>", "PostgreSQL schema of the store").default("workpool"))
    .addHelpText("after", HELP_AFTER)
    .showHelpAfterError("(run workpool --help for usage)")
    .exitOverride()
    .configureOutput({
      // Help and usage errors, which may quote the command line.
      writeOut: (text) => cli.out.write(multiline(text)),
      writeErr: (text) => cli.out.write(multiline(text), "stderr"),
    });
  for (const register of COMMANDS) register(program, cli);
  for (const command of program.commands) command.exitOverride();
  return program;
}

/** The exit code and message of an error a run ended with. */
function exitFor(e: unknown): { code: ExitCode; message: string | null } {
  if (e instanceof CommanderError) {
    // Help and version are "errors" to commander; commander has printed its own message.
    return { code: e.exitCode === 0 ? EXIT.ok : EXIT.usage, message: null };
  }
  if (e instanceof CliError) return { code: e.code, message: e.message };
  if (e instanceof InvalidArgumentError) return { code: EXIT.usage, message: e.message };
  if (e instanceof UnknownWorkError) return { code: EXIT.notFound, message: e.message };
  return { code: EXIT.error, message: errorText(e) };
}

/** Runs the command line `argv` (without node and the script) and resolves with the exit code. */
export async function run(argv: readonly string[], io: Io): Promise<number> {
  const cli = new Cli(io);
  try {
    await buildProgram(cli).parseAsync([...argv], { from: "user" });
    return cli.exitCode;
  } catch (e) {
    const { code, message } = exitFor(e);
    // On one line: the message may quote stored text or the command line.
    if (message !== null) cli.out.note(t`workpool: ${message.replace(/^workpool: /, "")}`);
    return code;
  }
}
