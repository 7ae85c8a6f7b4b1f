/**
 * Runs the built `workpool` bin (dist/cli/main.js) as a child process, as a user would,
 * and collects its output and exit code.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { requireBuild } from "../helpers/child.js";

const BIN = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

/** What one run printed and how it exited. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment of a run: this process's, without the variables that name a store unless given. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.WORKPOOL_DB;
  delete env.DATABASE_URL;
  delete env.NO_COLOR;
  return { ...env, ...extra };
}

/** Runs `workpool ...args` to its end. */
export function runCli(args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  requireBuild();
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: childEnv(env), timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** A run left going (for --serve and --watch). */
export interface RunningCli {
  proc: ChildProcess;
  /** Resolves once `condition(stdout, stderr)` holds; rejects if the process exits first. */
  until(condition: (stdout: string, stderr: string) => boolean): Promise<void>;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | string>;
}

/** Starts `workpool ...args` and leaves it running. */
export function startCli(args: readonly string[], env: Record<string, string> = {}): RunningCli {
  requireBuild();
  const proc = spawn(process.execPath, [BIN, ...args], { env: childEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  const waiters: (() => void)[] = [];
  const notify = (): void => {
    for (const w of waiters.splice(0)) w();
  };
  proc.stdout!.setEncoding("utf8").on("data", (chunk: string) => ((out += chunk), notify()));
  proc.stderr!.setEncoding("utf8").on("data", (chunk: string) => ((err += chunk), notify()));
  proc.on("exit", notify);
  const exited = new Promise<number | string>((resolve) => proc.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
  return {
    proc,
    exited,
    stdout: () => out,
    stderr: () => err,
    async until(condition) {
      while (!condition(out, err)) {
        if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`workpool exited early: ${err}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}
