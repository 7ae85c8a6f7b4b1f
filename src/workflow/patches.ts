/**
 * Patches: changing a workflow's code while runs are in flight. `step.patched(id)` lets new
 * code take a new path while runs started by the old code replay the old one; the choice is
 * journaled as a marker entry (kind "patch"), so a run takes the same path on every replay.
 * Replay still checks every call against the journal: a marker only matches a patch call
 * with its id, and a patch call never skips an entry the journal has.
 */
import { checkName } from "../checks.js";
import { InvalidArgumentError } from "../errors.js";
import type { Execution } from "./execution.js";

/** A patch id: 1 to 200 characters of letters, digits and _ . : - /. */
export function checkPatchId(field: string, value: unknown): string {
  return checkName(field, value, 200);
}

/**
 * step.patched(id) at the execution's next position: true (the marker journaled, or
 * replayed) when the journal has nothing there yet or has this marker; false, taking no
 * position, when it records anything else: the run was started by the code before the patch.
 */
export function patched(exec: Execution, id: string): boolean {
  checkOpen(exec);
  const entry = exec.nextEntry();
  if (entry !== undefined && !(entry.kind === "patch" && entry.name === id)) return false;
  void exec.call({ kind: "patch", id });
  return true;
}

/**
 * step.deprecatePatch(id): the marker the journal has at the next position is consumed (a
 * run that took the patch); otherwise nothing is journaled and no position is taken.
 */
export function deprecatePatch(exec: Execution, id: string): void {
  checkOpen(exec);
  const entry = exec.nextEntry();
  if (entry?.kind === "patch" && entry.name === id) void exec.call({ kind: "patch", id });
}

/** A patch call after the function ended is a bug in the function (an unawaited step). */
function checkOpen(exec: Execution): void {
  if (exec.ending !== null) {
    throw new InvalidArgumentError("step", "was called after the workflow function returned; await every step call");
  }
}
