/**
 * What the checker reads of a pool's workflows after a step: its runs, their journals and
 * the events sent to them, straight from the store's tables (SQLite's `workpool_workflow_*`,
 * PostgreSQL's `workflow_*` in the store's schema), as plain rows.
 */

/** A run as the checker reads it. */
export interface WfRun {
  id: string;
  name: string;
  state: string;
  result: string | null;
  blocked: string | null;
  cancelReason: string | null;
  onComplete: string | null;
  ocState: string;
  parentId: string | null;
  steps: number;
  /** The journal's size as the run's row counts it. */
  journalBytes: number;
  finishedAt: number | null;
  /** The version that started it, and whether it is pinned to it. */
  version: string | null;
  pinned: boolean;
  /** When an advance in a process without its version parked it (null: not parked). */
  parkedAt: number | null;
}

/** A journal entry as the checker reads it. */
export interface WfEntry {
  runId: string;
  n: number;
  kind: string;
  name: string;
  state: string;
  outcome: string | null;
  args: string | null;
  workId: string | null;
  childId: string | null;
  delivered: number | null;
}

/** An event as the checker reads it. */
export interface WfEvent {
  runId: string;
  seq: number;
  name: string;
  payload: string;
  consumedStep: number | null;
}

/** A pool's workflows after a step. */
export interface WfSnapshot {
  runs: WfRun[];
  entries: WfEntry[];
  events: WfEvent[];
}

/** The table names of a store's workflows. */
export interface WfTables {
  runs: string;
  steps: string;
  events: string;
}

/** The three reads of a pool's workflows (`$POOL` stands for the pool's name, quoted or bound). */
export function wfQueries(t: WfTables, pool: string): string[] {
  return [
    `SELECT id, name, state, result, blocked, cancel_reason, on_complete, oc_state, parent_id, steps, journal_bytes, finished_at, version, pinned, parked_at FROM ${t.runs} WHERE pool = ${pool} ORDER BY id`,
    `SELECT s.run_id, s.n, s.kind, s.name, s.state, s.outcome, s.args, s.work_id, s.child_id, s.delivered
       FROM ${t.steps} s JOIN ${t.runs} r ON r.id = s.run_id WHERE r.pool = ${pool} ORDER BY s.run_id, s.n`,
    `SELECT e.run_id, e.seq, e.name, e.payload, e.consumed_step
       FROM ${t.events} e JOIN ${t.runs} r ON r.id = e.run_id WHERE r.pool = ${pool} ORDER BY e.run_id, e.seq`,
  ];
}

type Raw = Record<string, unknown>;
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** The rows of the three reads as a snapshot. */
export function toWfSnapshot(runs: Raw[], steps: Raw[], events: Raw[]): WfSnapshot {
  return {
    runs: runs.map((r) => ({
      id: String(r.id),
      name: String(r.name),
      state: String(r.state),
      result: str(r.result),
      blocked: str(r.blocked),
      cancelReason: str(r.cancel_reason),
      onComplete: str(r.on_complete),
      ocState: String(r.oc_state),
      parentId: str(r.parent_id),
      steps: Number(r.steps),
      journalBytes: Number(r.journal_bytes),
      finishedAt: num(r.finished_at),
      version: str(r.version),
      // A boolean on PostgreSQL, 0 or 1 on SQLite.
      pinned: r.pinned === true || r.pinned === 1,
      parkedAt: num(r.parked_at),
    })),
    entries: steps.map((s) => ({
      runId: String(s.run_id),
      n: Number(s.n),
      kind: String(s.kind),
      name: String(s.name),
      state: String(s.state),
      outcome: str(s.outcome),
      args: str(s.args),
      workId: str(s.work_id),
      childId: str(s.child_id),
      delivered: num(s.delivered),
    })),
    events: events.map((e) => ({
      runId: String(e.run_id),
      seq: Number(e.seq),
      name: String(e.name),
      payload: String(e.payload),
      consumedStep: num(e.consumed_step),
    })),
  };
}
