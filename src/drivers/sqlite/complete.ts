/**
 * complete() on SQLite: a batch of action results written and the slots they free claimed,
 * in one write transaction. Each write is fenced in its own UPDATE (`id`, `attempt`, still
 * running), so nothing is read back first; a requested cancel wins over the outcome.
 */
import type { ClaimOptions, CompleteResult, CompletionWrite, PoolStats } from "../../driver/driver.js";
import { claimRows } from "./claim.js";
import type { Statements } from "./statements.js";

/**
 * Writes action outcomes of `pool` under the write lock the caller holds (work without
 * onComplete only: its onComplete bookkeeping is left as it is), adds them to the report counters and, given `claim`, claims for the freed
 * slots as claimRows does.
 */
export function completeRows(
  stmts: Statements,
  pool: string,
  writes: readonly CompletionWrite[],
  now: number,
  claim: ClaimOptions | null,
): CompleteResult {
  const stale: string[] = [];
  const canceled: string[] = [];
  const stats: PoolStats = { completed: 0, succeeded: 0, failed: 0, retries: 0, canceled: 0 };
  for (const w of writes) {
    if (writeOutcome(stmts, w, now)) {
      if (w.status === "success") stats.succeeded++;
      else if (w.status === "failed") stats.failed++;
      else if (w.status === "retrying") stats.retries++;
      else stats.canceled++;
    } else if (stmts.completeCanceled.run({ id: w.id, attempt: w.attempt, now, entry: w.attemptEntry ?? null }).changes) {
      // Not written as it was only because a cancel was requested while it ran.
      canceled.push(w.id);
      stats.canceled++;
    } else stale.push(w.id);
  }
  stats.completed = writes.length - stale.length;
  if (stats.completed) stmts.addStats.run({ pool, ...stats });
  return { stale, canceled, claim: claim ? claimRows(stmts, pool, claim) : null };
}

/** Writes one outcome where the row is still on its attempt and no cancel was requested; true if it was. */
function writeOutcome(stmts: Statements, w: CompletionWrite, now: number): boolean {
  const entry = w.attemptEntry ?? null;
  if (w.status === "retrying") return stmts.completeRetry.run({ id: w.id, attempt: w.attempt, run_at: w.runAt, entry }).changes > 0;
  // The common case, a success: no attempt record, positional parameters.
  if (entry === null) return stmts.completeFinish.run(w.result, now, w.id, w.attempt).changes > 0;
  return stmts.completeFinishLogged.run({ id: w.id, attempt: w.attempt, result: w.result, now, entry }).changes > 0;
}
