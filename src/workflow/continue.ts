/**
 * A run continued where its step finished: when the process that writes a step's outcome
 * keeps the run's execution at the run's generation, the function is given the outcome and
 * runs on inside the same transaction, and what it does next is written there too (the
 * step's end, the next steps' work, the journal), with no advance to enqueue, claim and
 * read back. Anything else (no execution here, another writer first, a failure) falls back
 * to an advance, which replays if it must.
 */
import type { TxOps } from "../driver/driver.js";
import { commitAdvance, keepOrDrop } from "./advance.js";
import { inAdvanceSpan, reportDelivered, storeAdvanceTrace } from "./run-observe.js";
import { opsOn, type Engine } from "./engine.js";
import { Execution, type StepOutcome } from "./execution.js";
import { deliveredCall } from "./observe.js";

/**
 * Gives entry `n` of run `runId` its `outcome` and continues the function in `ops`'
 * transaction. True if it did and wrote what followed; false when the caller must enqueue
 * an advance. Writes nothing it does not commit: call it inside a savepoint.
 */
export async function continueHere<Tx>(
  engine: Engine<Tx>,
  ops: TxOps<Tx>,
  runId: string,
  n: number,
  outcome: StepOutcome,
): Promise<boolean> {
  const run = await opsOn(engine, ops.tx).lockRun(runId);
  if (!run || run.state !== "running") return false;
  const exec = engine.executions.take(runId, run.generation);
  if (!exec || !exec.open) return false;
  const done = await inAdvanceSpan(engine, run, "continued", async (span) => {
    const journalLength = exec.calls.length;
    const call = exec.calls[n];
    exec.deliver(n, outcome);
    await Execution.settle();
    const now = engine.rt.options.clock.now();
    // The journal holds the outcome as the step's end wrote it: its JSON text.
    const committed = await commitAdvance(engine, ops, run, exec, journalLength, [n], JSON.stringify(outcome).length, now);
    if (committed && span) await storeAdvanceTrace(engine, ops, run, span);
    keepOrDrop(engine, run, exec, committed);
    const step = committed && call ? deliveredCall(call, outcome, now) : null;
    if (step) engine.events.later(ops, () => reportDelivered(engine, run, [step]));
    return { exec, committed, replayedEntries: 0 };
  });
  return done.committed;
}
