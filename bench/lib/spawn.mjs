// Runs one step in a child process (see child.mjs) and returns its result.
import { fork } from "node:child_process";

const CHILD = new URL("./child.mjs", import.meta.url);
/** --expose-gc: the workflow heap figures force a GC before reading the heap. */
const EXEC_ARGV = ["--max-old-space-size=4096", "--expose-gc"];

export function runChild(system, op, params, ctx, { timeoutMs = 15 * 60_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = fork(CHILD, [], { stdio: ["ignore", "inherit", "inherit", "ipc"], execArgv: EXEC_ARGV });
    let reply = null;
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${system} ${op}: no answer after ${timeoutMs / 1000} s; killed`));
    }, timeoutMs);
    child.once("message", (m) => (reply = m));
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (reply?.ok) resolve(reply.result);
      else if (reply) reject(new Error(`${system} ${op} failed:\n${reply.error}`));
      else reject(new Error(`${system} ${op}: child exited (${signal ?? code}) without an answer`));
    });
    child.send({ system, op, params, ctx });
  });
}
