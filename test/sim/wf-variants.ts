/**
 * Deliberately broken workflow layers, used only by the simulator's own tests to prove that
 * each workflow invariant catches the bug it is about (see variants.test.ts). Each wraps
 * the driver's workflow operations (a few write the store's tables directly, as a broken
 * driver's SQL would); one switches off the engine's determinism check, which no driver
 * can do.
 */
import type { Database } from "better-sqlite3";
import type { PoolClient } from "pg";
import type { Driver } from "../../src/driver/driver.js";
import type { Maybe, WorkflowOps } from "../../src/driver/workflow-ops.js";
import { Execution } from "../../src/workflow/execution.js";
import { Step } from "../../src/workflow/step.js";
import type { MapOptions } from "../../src/workflow/types.js";
import { override, type Variant } from "./variant-kit.js";

/** The driver with some of its workflow operations replaced (`real` are the originals on the same connection or transaction). */
function overrideWf<Tx>(driver: Driver<Tx>, methods: (real: WorkflowOps, tx: Tx | undefined) => Partial<WorkflowOps>): Driver<Tx> {
  return override(driver, (d) => ({
    workflows: (tx?: Tx) => {
      const real = d.workflows(tx);
      return { ...real, ...methods(real, tx) };
    },
  }));
}

/**
 * One statement on `tx` (or the store's connection), in each store's SQL: the sim's
 * PostgreSQL connections have the store's schema on their search_path. Returns the rows, or
 * the count of rows changed when there are none to return.
 */
function raw<Tx>(
  driver: Driver<Tx>,
  tx: Tx | undefined,
  sqlite: string,
  postgres: string,
  params: unknown[],
): Maybe<{ rows: Record<string, unknown>[]; changed: number }> {
  if (driver.dialect === "sqlite") {
    const stmt = (tx as unknown as Database).prepare(sqlite);
    if (stmt.reader) return { rows: stmt.all(...params) as Record<string, unknown>[], changed: 0 };
    return { rows: [], changed: stmt.run(...params).changes };
  }
  return (tx as unknown as PoolClient)
    .query(postgres, params)
    .then((r) => ({ rows: r.rows as Record<string, unknown>[], changed: r.rowCount ?? 0 }));
}

const then = <T, U>(v: Maybe<T>, f: (t: T) => U): Maybe<U> => (v instanceof Promise ? v.then(f) : f(v));

/** The workflow layer's broken variants. */
export const WF_VARIANTS: readonly Variant[] = [
  {
    name: "advance-unfenced",
    bug: "advanceRun ignores the run's generation: an advance that read an older run commits too",
    caughtBy: ["no-step-beyond-mismatch", "run-final", "wf-on-complete-once", "step-once", "cancel-final", "events-once"],
    workflows: true,
    wrap: (d) =>
      overrideWf(d, (real) => ({
        advanceRun: (id, _generation, update) => then(real.updateRun(id, update), () => true),
      })),
  },
  {
    name: "end-step-overwrites",
    bug: "endStep overwrites an entry that has ended: a late result replaces the cancel's, a timeout the event's",
    caughtBy: ["step-once"],
    workflows: true,
    wrap: (d) =>
      overrideWf(d, (_real, tx) => ({
        endStep: (runId, n, state, outcome, now) =>
          then(
            raw(
              d,
              tx,
              "UPDATE workpool_workflow_steps SET state = ?, outcome = ?, finished_at = ? WHERE run_id = ? AND n = ?",
              "UPDATE workflow_steps SET state = $1, outcome = $2, finished_at = $3 WHERE run_id = $4 AND n = $5",
              [state, outcome, now, runId, n],
            ),
            (r) => r.changed > 0,
          ),
      })),
  },
  {
    name: "event-not-consumed",
    bug: "takeEvent hands out the oldest event without marking it consumed: the next wait takes it again",
    caughtBy: ["events-once"],
    workflows: true,
    wrap: (d) =>
      overrideWf(d, (_real, tx) => ({
        takeEvent: (runId, name) =>
          then(
            raw(
              d,
              tx,
              "SELECT seq, payload FROM workpool_workflow_events WHERE run_id = ? AND name = ? AND consumed_step IS NULL ORDER BY seq LIMIT 1",
              "SELECT seq, payload FROM workflow_events WHERE run_id = $1 AND name = $2 AND consumed_step IS NULL ORDER BY seq LIMIT 1",
              [runId, name],
            ),
            (r) => (r.rows[0] ? { seq: Number(r.rows[0].seq), payload: String(r.rows[0].payload) } : null),
          ),
      })),
  },
  {
    name: "cancel-keeps-work",
    bug: "cancelOpenSteps ends a canceled run's open entries but reports none, so their work is never canceled",
    caughtBy: ["cancel-final"],
    workflows: true,
    wrap: (d) =>
      overrideWf(d, (real) => ({ cancelOpenSteps: (runId, outcome, now) => then(real.cancelOpenSteps(runId, outcome, now), () => []) })),
  },
  {
    name: "finished-run-reopens",
    bug: "lockRun reads a finished run as running, so a late cancel, timeout or event moves it again",
    caughtBy: ["run-final"],
    workflows: true,
    wrap: (d) =>
      overrideWf(d, (real) => ({
        lockRun: (id) =>
          then(real.lockRun(id), (run) =>
            run && ["success", "failed", "canceled"].includes(run.state) ? { ...run, state: "running" as const } : run,
          ),
      })),
  },
  {
    name: "on-complete-leaks",
    bug: "in a transaction that wrote a run, a savepoint keeps the writes of a handler that threw: a run's onComplete that threw is committed, then delivered again",
    caughtBy: ["wf-on-complete-once"],
    workflows: true,
    wrap: (d) => {
      // Transactions run one at a time in a simulated run: whether the outermost one has used the workflow operations.
      let depth = 0;
      let touched = false;
      return override(d, (real) => ({
        workflows: (tx) => {
          if (tx !== undefined) touched = true;
          return real.workflows(tx);
        },
        transaction: async (fn) => {
          if (depth++ === 0) touched = false;
          try {
            return await real.transaction((ops) =>
              fn(
                new Proxy(ops, {
                  get: (t, p) =>
                    p === "savepoint"
                      ? <T>(f: () => Promise<T> | T) => (touched ? Promise.resolve(f()) : t.savepoint(f))
                      : Reflect.get(t, p, t),
                }),
              ),
            );
          } finally {
            depth--;
          }
        },
      }));
    },
  },
  {
    name: "blocked-stays-running",
    bug: "advanceRun records a run's mismatch but not its blocked state: the run goes on in the processes whose code still matches it",
    caughtBy: ["no-step-beyond-mismatch"],
    workflows: true,
    wrap: (d) =>
      overrideWf(d, (real) => ({
        advanceRun: (id, generation, update) =>
          real.advanceRun(id, generation, update.state === "blocked" ? { ...update, state: undefined } : update),
      })),
  },
  {
    name: "runs-deleted-early",
    bug: "retention deletes finished runs whatever their age: a run finished less than retentionMs ago is gone",
    caughtBy: ["run-final"],
    workflows: true,
    wrap: (d) =>
      overrideWf(d, (real) => ({
        deleteFinishedRuns: (pool, _before, limit) => real.deleteFinishedRuns(pool, Number.MAX_SAFE_INTEGER, limit),
      })),
  },
  {
    name: "no-determinism-check",
    bug: "replay never blocks a run whose code no longer matches its journal: the changed code goes on from the old journal",
    // The changed code may also wait, for good, on a call the journal answered for another.
    caughtBy: ["no-step-beyond-mismatch", "nothing-lost"],
    workflows: true,
    wrap: (d) => d,
    patch: () => {
      const block = Object.getOwnPropertyDescriptor(Execution.prototype, "block")!;
      Execution.prototype.block = () => undefined;
      return () => Object.defineProperty(Execution.prototype, "block", block);
    },
  },
  {
    name: "map-ignores-concurrency",
    bug: "step.map ignores its concurrency: every item starts at once",
    // An item's outcome also comes back in another round than its window made it, so a replay may not match.
    caughtBy: ["map-window"],
    workflows: true,
    extras: true,
    wrap: (d) => d,
    patch: () => {
      const map = Object.getOwnPropertyDescriptor(Step.prototype, "map")!;
      const real = Step.prototype.map as (this: Step, items: readonly unknown[], fn: unknown, o?: MapOptions) => Promise<unknown[]>;
      Object.defineProperty(Step.prototype, "map", {
        ...map,
        value(this: Step, items: readonly unknown[], fn: unknown, o?: MapOptions) {
          return real.call(this, items, fn, { ...o, concurrency: 10_000 });
        },
      });
      return () => Object.defineProperty(Step.prototype, "map", map);
    },
  },
  {
    name: "restart-keeps-entries",
    bug: "a restart keeps the entry it restarts from: the function runs past a call it should make again",
    caughtBy: ["operator-actions"],
    workflows: true,
    extras: true,
    wrap: (d) => overrideWf(d, (real) => ({ deleteStepsFrom: (runId, from) => real.deleteStepsFrom(runId, from + 1) })),
  },
  {
    name: "skip-leaves-gap",
    bug: "a skip deletes the entry it skips but moves no later entry down: the journal has a hole",
    // Nor is the event the entry took given back: where the skip looks like a restart, events-once sees that.
    caughtBy: ["operator-actions", "events-once"],
    workflows: true,
    extras: true,
    // Runs blocked for a skip are few: a seed in fifty or so has one.
    sqliteOnly: true,
    wrap: (d) =>
      overrideWf(d, (_real, tx) => ({
        dropStep: (runId, n) =>
          then(
            raw(
              d,
              tx,
              "DELETE FROM workpool_workflow_steps WHERE run_id = ? AND n = ?",
              "DELETE FROM workflow_steps WHERE run_id = $1 AND n = $2",
              [runId, n],
            ),
            () => undefined,
          ),
      })),
  },
  {
    name: "fork-copies-one-more",
    bug: "a fork copies the source's entry at `from` too: the fork never makes that call",
    caughtBy: ["operator-actions"],
    workflows: true,
    extras: true,
    wrap: (d) => overrideWf(d, (real) => ({ forkRun: (f) => real.forkRun({ ...f, from: f.from + 1 }) })),
  },
  {
    name: "pin-ignored",
    bug: "the advance reads every run as unpinned: a process of another version runs a pinned run's function",
    // Run by code it was not written for, a run may also block on its journal.
    caughtBy: ["pinned-version", "no-step-beyond-mismatch"],
    workflows: true,
    extras: true,
    wrap: (d) => overrideWf(d, (real) => ({ readRun: (id) => then(real.readRun(id), (run) => run && { ...run, pinned: false }) })),
  },
  {
    name: "journal-bytes-unsized",
    bug: "an advance adds its entries to the run's journal but not their size: maxJournalBytes caps a journal it undercounts",
    caughtBy: ["journal-size"],
    workflows: true,
    wrap: (d) =>
      overrideWf(d, (real) => ({ advanceRun: (id, generation, update) => real.advanceRun(id, generation, { ...update, addBytes: 0 }) })),
  },
];
