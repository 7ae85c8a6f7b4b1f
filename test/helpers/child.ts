/**
 * Child worker processes for multi-process tests: spawn, await a line on stdout, kill.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** A spawned child with a way to wait for its output lines. */
export interface Child {
  proc: ChildProcess;
  /** Resolves with the first stdout line matching `pattern` (also one seen already). */
  waitForLine(pattern: RegExp): Promise<string>;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
  /** Everything written to stderr, for failure messages. */
  stderr(): string;
}

/** Throws a clear message when the package has not been built (children import dist/). */
export function requireBuild(): void {
  if (!existsSync(fileURLToPath(new URL("../../dist/index.js", import.meta.url)))) {
    throw new Error("dist/ is missing: run `npm run build` before these tests (npm test does)");
  }
}

/**
 * Starts `node <script> ...args` from test/fixtures. With `detachedIo`, the child gets no
 * pipes at all (an open pipe can keep a process alive, hiding lifecycle bugs).
 */
export function spawnChild(script: string, args: string[], options: { detachedIo?: boolean } = {}): Child {
  requireBuild();
  const path = fileURLToPath(new URL(`../fixtures/${script}`, import.meta.url));
  const proc = spawn(process.execPath, [path, ...args], { stdio: options.detachedIo ? "ignore" : ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (l: string) => void }[] = [];
  let err = "";
  let buf = "";
  proc.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    buf += chunk;
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      lines.push(line);
      for (const w of [...waiters]) {
        if (w.pattern.test(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
  proc.stderr?.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<number | string>((resolve) => proc.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
  return {
    proc,
    exited,
    stderr: () => err,
    waitForLine(pattern) {
      const seen = lines.find((l) => pattern.test(l));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ pattern, resolve });
        void exited.then((code) => reject(new Error(`child exited (${code}) before printing ${pattern}; stderr:\n${err}`)));
      });
    },
  };
}
