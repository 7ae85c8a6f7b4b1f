/**
 * What every command of the `workpool` CLI shares: its output, its exit code, and the
 * store and admin API it works on (opened from the global options, closed afterwards).
 */
import type { Command } from "commander";
import { workpoolAdmin } from "../admin/admin.js";
import type { WorkpoolAdmin } from "../admin/types.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { Output, type Io } from "./io.js";
import { openStore, resolveDb, unreachable, type OpenStore } from "./store.js";

/** The global options (see program.ts). */
export interface GlobalOptions {
  db?: string;
  schema: string;
}

/** The shared state of one run of the command. */
export class Cli {
  readonly out: Output;
  /** The code the run exits with once the command returns (commands raise it with {@link fail}). */
  exitCode: ExitCode = EXIT.ok;

  constructor(io: Io) {
    this.out = new Output(io);
  }

  /** Sets the exit code, keeping the first failure a command reported. */
  fail(code: ExitCode): void {
    if (this.exitCode === EXIT.ok) this.exitCode = code;
  }

  /**
   * Opens the store named by the global options of `command`, runs `fn` with an admin API
   * over it, and closes it. `create` (migrate only) lets a new database or schema be made.
   * An error about reaching the store becomes an "unreachable" exit.
   */
  async withStore<T>(command: Command, fn: (admin: WorkpoolAdmin, opened: OpenStore) => Promise<T>, create = false): Promise<T> {
    const options = command.optsWithGlobals<GlobalOptions>();
    const opened = await openStore(resolveDb(options.db, this.out.env), options.schema, create);
    try {
      return await fn(workpoolAdmin(opened.store), opened);
    } catch (e) {
      throw unreachable(opened.driver, e);
    } finally {
      await opened.store.close();
    }
  }
}
