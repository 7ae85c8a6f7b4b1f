/**
 * The transitions that end an attempt: success, final failure and retry with backoff
 * (running → finished, or back to pending). Action outcomes are written in batches
 * (group commit), each batch claiming work for the slots it frees in its own
 * transaction; a mutation is run and finished in one transaction.
 */
import type { ClaimOptions, ClaimResult, CompletionWrite, TxOps, WorkRow } from "../../driver/driver.js";
import type { CompletedEvent } from "../../events.js";
import type { PoolRuntime } from "../runtime.js";
import { fallbackTransition, refusalReason } from "./fallback.js";
import { attemptEntry, completedEvent, decide, type AttemptOutcome, type Transition } from "./outcome.js";
import { applyTransitions, lockCurrentAttempts, warnStaleAttempt } from "./write.js";
import { workLogLevel } from "../work-meta.js";

/** One action attempt's outcome to write, at a fallback level (0: as it is; see fallback.ts). */
export interface FinishEntry {
  /** The row as claimed: the attempt the outcome belongs to. */
  row: WorkRow;
  outcome: AttemptOutcome;
  level: number;
  /** What the store said when it last refused this entry (for the fallback's reason). */
  lastError?: unknown;
}

/** What a written batch produced. */
export interface FinishedBatch {
  events: CompletedEvent[];
  /** The claim made in the batch's transaction, and the options it was made with (null: none). */
  claim: ClaimResult | null;
  options: ClaimOptions | null;
}

/**
 * Writes a batch of action outcomes and, when `claimOptions` gives options, claims the
 * freed slots in the same transaction. A batch with no onComplete to run and nothing
 * simplified goes through the driver's one-call `complete`.
 */
export function finishActions<Tx>(
  rt: PoolRuntime<Tx>,
  batch: readonly FinishEntry[],
  claimOptions: () => ClaimOptions | null,
): Promise<FinishedBatch> {
  const oneCall = batch.every((p) => p.row.onComplete === null && p.level === 0);
  return oneCall ? finishInOneCall(rt, batch, claimOptions) : finishInTransaction(rt, batch, claimOptions);
}

/**
 * The driver's `complete`: the transitions are decided here from the rows as claimed
 * (their attempt, kind and retry behaviour cannot change while the attempt is current);
 * the store fences each write by attempt and lets a requested cancel win.
 */
export async function finishInOneCall<Tx>(
  rt: PoolRuntime<Tx>,
  batch: readonly FinishEntry[],
  claimOptions: () => ClaimOptions | null,
): Promise<FinishedBatch> {
  const now = rt.options.clock.now();
  const transitions = batch.map((p) => decide(rt, p.row, p.outcome, now));
  const writes: CompletionWrite[] = transitions.map((t) => ({
    id: t.row.id,
    attempt: t.row.attempt,
    status: t.status,
    result: t.result ? JSON.stringify(t.result) : null,
    runAt: t.runAt ?? null,
    attemptEntry: attemptEntry(t, now),
  }));
  const options = claimOptions();
  const res = await rt.driver.complete(rt.pool, writes, now, options);
  const stale = new Set(res.stale);
  const canceled = new Set(res.canceled);
  const events: CompletedEvent[] = [];
  // Events are built only when someone will see them: this runs for every job.
  const wanted = rt.events.wants("completed");
  for (const t of transitions) {
    if (stale.has(t.row.id)) warnStaleAttempt(rt, t.row);
    else if (!wanted && !rt.events.wants("completed", workLogLevel(t.row))) continue;
    else if (canceled.has(t.row.id)) events.push(completedEvent(rt, t.row, "canceled", now));
    else events.push(completedEvent(rt, t.row, t.status, now, t.error));
  }
  return { events, claim: res.claim, options };
}

/** A transaction of steps, for batches with onComplete handlers to run inside it. */
export function finishInTransaction<Tx>(
  rt: PoolRuntime<Tx>,
  batch: readonly FinishEntry[],
  claimOptions: () => ClaimOptions | null,
): Promise<FinishedBatch> {
  return rt.driver.transaction(async (ops) => {
    const now = rt.options.clock.now();
    const current = await lockCurrentAttempts(
      rt,
      ops,
      batch.map((p) => p.row),
    );
    const transitions: Transition[] = [];
    for (const p of batch) {
      const row = current.get(p.row.id);
      // A batch may hold an older attempt's late result beside the current one's: only the current one's is written.
      if (!row || row.attempt !== p.row.attempt) continue;
      const t = decide(rt, row, p.outcome, now);
      transitions.push(p.level ? fallbackTransition(t, p.level, refusalReason(row.attempt, p.lastError)) : t);
    }
    const events = await applyTransitions(rt, ops, transitions, now);
    const options = claimOptions();
    const claim = options ? await ops.claim(rt.pool, options) : null;
    return { events, claim, options };
  });
}

/**
 * Runs a mutation attempt and finishes it in one transaction: its writes and its state
 * change commit together, exactly once. `attempt` runs the handler (inside a savepoint
 * of this transaction) and says how it ended; it is not called when the attempt is no
 * longer current or its work was canceled. Returns the events to emit.
 */
export function finishMutation<Tx>(
  rt: PoolRuntime<Tx>,
  row: WorkRow,
  attempt: (ops: TxOps<Tx>) => Promise<AttemptOutcome>,
): Promise<CompletedEvent[]> {
  return rt.driver.transaction(async (ops) => {
    const now = rt.options.clock.now();
    const current = (await lockCurrentAttempts(rt, ops, [row])).get(row.id);
    if (!current) return [];
    const outcome: AttemptOutcome = current.cancelRequested ? { kind: "canceled" } : await attempt(ops);
    return applyTransitions(rt, ops, [decide(rt, current, outcome, now)], now);
  });
}
