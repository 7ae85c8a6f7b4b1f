/**
 * The invariants of a pool's workflows, checked on the stored runs, journals, events and
 * work rows after every step that ran a store call (see docs/testing.md for why each holds):
 * step-once, mutation-once (a mutation step's app write agrees with its entry),
 * wf-on-complete-once, no-step-beyond-mismatch, events-once (wf-events.ts), cancel-final,
 * run-final, map-window, map-fail-fast and patch-marker (wf-map-checks.ts), and
 * operator-actions (wf-operator-checks.ts).
 */
import type { WorkRow } from "../../src/driver/driver.js";
import type { RunResult } from "../../src/types.js";
import { Violation } from "./violation.js";
import { STEP_DONE, StepWorkLedger } from "./wf-step-work.js";
import { MapChecker } from "./wf-map-checks.js";
import { byRun, checkEvents, checkJournalSize, outcomeOf } from "./wf-events.js";
import {
  checkFork,
  entriesAfter,
  factsOf,
  ocsSince,
  reopenOf,
  type EntryFacts,
  type Operated,
  type OperatorObservations,
  type Reopen,
} from "./wf-operator-checks.js";
import type { WfEntry, WfRun, WfSnapshot } from "./wf-rows.js";
import { CLEANUP, fitsShape, type WfShape } from "./wf-shapes.js";

/** The prefix of the workflow layer's own handlers. */
export const INTERNAL = "workpool:workflow.";
const FINISHED = new Set(["success", "failed", "canceled"]);

/** Whether a work row belongs to a workflow: a step's work, or the layer's own work (advances, timeouts). */
export function isWorkflowRow(row: Pick<WorkRow, "fnName" | "onComplete">): boolean {
  return row.fnName.startsWith(INTERNAL) || row.onComplete === STEP_DONE;
}

/** What the application and the operator did to runs: the checker compares it with what the runs did. */
export interface WfObservations extends OperatorObservations {
  /** Runs cancel() was called for. */
  cancelAsked: Set<string>;
  /** Runs cancel() answered true for. */
  canceledTrue: Set<string>;
}

interface KnownRun {
  state: string;
  result: string | null;
  /** Set once the run was seen canceling (or ended by a cancel or its timeout): its reason. */
  cancel: { reason: string | null } | null;
  /** While blocked: its entries and its steps' work when first seen blocked. */
  blocked: { entries: number; works: number } | null;
  entries: Map<number, EntryFacts>;
  /** The run as last read: whether retention may delete it. */
  last: WfRun | null;
  /** How many times a restart or skip moved the run: its steps' work is counted per life. */
  lives: number;
  /** The onComplete kinds committed before its last restart or skip. */
  ocBefore: string[];
  /** Whether a skip ever moved its entries (events then need not be taken in order). */
  skipped: boolean;
  /** After a skip, the journal's length then: until it grows, no definition need make it. */
  unshaped: number | null;
}

/** Checks a pool's workflows step by step. */
export class WorkflowChecker {
  private readonly runs = new Map<string, KnownRun>();
  private readonly stepWork: StepWorkLedger;
  private readonly maps: MapChecker;
  /** Restarts, skips and forks seen committed. */
  readonly operated: Operated = { restarts: 0, skips: 0, forks: 0 };

  constructor(
    /** The run's workflow shapes, and the changed ones some processes define (or null). */
    private readonly shapes: readonly WfShape[],
    private readonly changed: readonly WfShape[] | null,
    private readonly label: (id: string) => string,
    private readonly runLabel: (id: string) => string,
  ) {
    this.maps = new MapChecker(shapes, changed, label, runLabel);
    this.stepWork = new StepWorkLedger(label, runLabel);
  }

  /**
   * Checks the workflows read after a step at `now`, with the work rows, app writes and
   * onComplete rows read with them; a finished run may be deleted `retentionMs` after it finished.
   */
  check(
    wf: WfSnapshot,
    rows: readonly WorkRow[],
    apps: Map<string, number>,
    ocs: Map<string, string[]>,
    obs: WfObservations,
    now: number,
    retentionMs: number,
  ): void {
    const rowById = new Map(rows.map((r) => [r.id, r]));
    const works = this.stepWork.check(rows, (id) => this.runs.get(id)?.lives ?? 0);
    const entries = byRun(wf.entries);
    const events = byRun(wf.events);
    const seen = new Set<string>();
    for (const run of wf.runs) {
      seen.add(run.id);
      const own = entries.get(run.id) ?? [];
      const fresh = !this.runs.has(run.id);
      const k = this.known(run);
      const fork = fresh ? obs.forks.get(run.id) : undefined;
      if (fork) this.firstOfFork(run, own, k, fork, entries.get(fork.source));
      const reopen = k.last ? reopenOf(run, own, k.last, k.entries, obs.asks.get(run.id), this.runLabel(run.id)) : null;
      if (reopen) this.reopen(run.id, k, reopen, ocs.get(run.id) ?? [], obs);
      this.checkRunResult(run, k, obs);
      this.checkEntries(run, own, k, rowById, apps);
      this.checkBlocked(run, own, k, works.get(run.id) ?? 0);
      this.checkJournal(run, own, k);
      this.maps.check(run, own, rowById);
      this.checkOnComplete(run, ocsSince(ocs.get(run.id) ?? [], k.ocBefore));
      checkEvents(run.id, own, events.get(run.id) ?? [], this.runLabel, !k.skipped);
      checkJournalSize(run, own, this.runLabel);
      k.last = run;
    }
    for (const [id, k] of this.runs) {
      if (seen.has(id)) continue;
      const why = this.keptBecause(k.last, now, retentionMs);
      if (why) throw new Violation("run-final", `run ${this.runLabel(id)} is no longer stored, but ${why}`);
      this.runs.delete(id);
    }
  }

  /** Why retention must not have deleted a run last read as `run` (null: it may have). */
  private keptBecause(run: WfRun | null, now: number, retentionMs: number): string | null {
    if (!run || !FINISHED.has(run.state)) return `it was ${run?.state ?? "never read"}`;
    if (run.finishedAt === null || run.finishedAt > now - retentionMs)
      return `it finished ${run.finishedAt === null ? "at no time" : `${now - run.finishedAt} ms ago`} (retention ${retentionMs} ms)`;
    if (run.ocState === "pending") return "its onComplete was pending";
    const parent = run.parentId === null ? undefined : this.runs.get(run.parentId)?.last;
    if (parent && !FINISHED.has(parent.state)) return `its parent was ${parent.state}`;
    return null;
  }

  private known(run: WfRun): KnownRun {
    let k = this.runs.get(run.id);
    if (!k) {
      k = {
        state: run.state,
        result: null,
        cancel: null,
        blocked: null,
        entries: new Map(),
        last: null,
        lives: 0,
        ocBefore: [],
        skipped: false,
        unshaped: null,
      };
      this.runs.set(run.id, k);
    }
    return k;
  }

  /** A fork when first read: its journal is the source's (operator-actions); a skipped source's need fit no definition. */
  private firstOfFork(
    run: WfRun,
    own: readonly WfEntry[],
    k: KnownRun,
    fork: { source: string; from: number },
    source: readonly WfEntry[] | undefined,
  ): void {
    checkFork(fork, own, source, this.runLabel(run.id));
    this.maps.rebase(run.id, own.length);
    this.operated.forks++;
    if (this.runs.get(fork.source)?.skipped) {
      k.skipped = true;
      k.unshaped = own.length;
    }
  }

  /** A restart or skip seen committed: the run begins a new life, its entries as the action left them. */
  private reopen(id: string, k: KnownRun, how: Reopen, ocs: readonly string[], obs: WfObservations): void {
    k.result = null;
    k.cancel = null;
    k.blocked = null;
    k.lives++;
    this.operated[how.kind === "restart" ? "restarts" : "skips"]++;
    k.ocBefore = [...ocs];
    obs.reopens.set(id, k.lives);
    obs.canceledTrue.delete(id);
    this.maps.rebase(id, how.kind === "restart" ? how.from : k.entries.size - 1);
    k.entries = entriesAfter(k.entries, how);
    if (how.kind === "skip") {
      k.skipped = true;
      k.unshaped = k.entries.size;
    }
  }

  /** run-final, and cancel-final's part about the result. */
  private checkRunResult(run: WfRun, k: KnownRun, obs: WfObservations): void {
    const name = `run ${this.runLabel(run.id)}`;
    if (k.result !== null && (run.result !== k.result || run.state !== k.state))
      throw new Violation("run-final", `${name} finished ${k.state} ${k.result}, then became ${run.state} ${run.result ?? ""}`);
    if (!k.cancel && (run.state === "canceling" || run.cancelReason !== null)) k.cancel = { reason: run.cancelReason };
    if (FINISHED.has(run.state) && k.result === null) {
      if (run.result === null) throw new Violation("run-final", `${name} is ${run.state} with no result`);
      const result = JSON.parse(run.result) as RunResult;
      if (result.kind !== run.state) throw new Violation("run-final", `${name} is ${run.state} with a ${result.kind} result`);
      if (k.cancel?.reason === "canceled" && result.kind !== "canceled")
        throw new Violation("cancel-final", `${name} was being canceled, then finished ${result.kind}`);
      if (k.cancel?.reason === "timeout" && (result.kind !== "failed" || !result.error.includes("timed out")))
        throw new Violation("cancel-final", `${name} was timing out, then finished ${run.result}`);
      if (obs.canceledTrue.has(run.id) && result.kind !== "canceled")
        throw new Violation("cancel-final", `${name} finished ${result.kind} although cancel() said it canceled it`);
      if (result.kind === "canceled" && run.parentId === null && !obs.cancelAsked.has(run.id))
        throw new Violation("cancel-final", `${name} finished canceled, but no cancel was asked`);
      k.result = run.result;
    }
    k.state = run.state;
  }

  /** step-once (an outcome is written once; entries never change or go), mutation-once, cancel-final for the steps. */
  private checkEntries(run: WfRun, own: readonly WfEntry[], k: KnownRun, rows: Map<string, WorkRow>, apps: Map<string, number>): void {
    const name = `run ${this.runLabel(run.id)}`;
    for (const e of own) {
      const before = k.entries.get(e.n);
      const outcome = outcomeOf(e);
      if (before) {
        if (before.kind !== e.kind || before.name !== e.name || before.workId !== e.workId || before.childId !== e.childId)
          throw new Violation("step-once", `${name}: step ${e.n} (${before.kind} ${before.name}) became ${e.kind} ${e.name}`);
        if (before.outcome !== null && (before.outcome !== e.outcome || before.state !== e.state))
          throw new Violation(
            "step-once",
            `${name}: step ${e.n} ended ${before.state} ${before.outcome}, then became ${e.state} ${e.outcome}`,
          );
      } else {
        if (k.blocked && run.state === "blocked")
          throw new Violation("no-step-beyond-mismatch", `${name} is blocked, yet step ${e.n} (${e.kind} ${e.name}) was journaled`);
        // After the cancel, only steps called once the function saw it (its clean-up) get work; others end at
        // the call. Values and patch markers start nothing.
        const cleanup = e.kind === "mutation" && e.name === CLEANUP;
        if (
          k.cancel &&
          !cleanup &&
          e.kind !== "value" &&
          e.kind !== "patch" &&
          (e.workId !== null || e.childId !== null || outcome?.by === undefined)
        )
          throw new Violation("cancel-final", `${name} was canceled, yet step ${e.n} (${e.kind} ${e.name}) was started`);
      }
      k.entries.set(e.n, factsOf(e));
      if (e.workId !== null) this.checkWork(name, e, outcome, rows.get(e.workId), apps.get(e.workId) ?? 0);
    }
    const ns = new Set(own.map((e) => e.n));
    for (const n of k.entries.keys()) if (!ns.has(n)) throw new Violation("step-once", `${name}: step ${n} is no longer in the journal`);
  }

  /** An entry agrees with its work: the outcome is the work's result; a canceled step's work is canceled too. */
  private checkWork(name: string, e: WfEntry, outcome: ReturnType<typeof outcomeOf>, row: WorkRow | undefined, apps: number): void {
    const step = `${name}: step ${e.n} (${e.kind}, work ${this.label(e.workId!)})`;
    if (outcome?.by !== undefined) {
      if (row && row.state !== "finished" && !row.cancelRequested)
        throw new Violation("cancel-final", `${step} was ended by the run's cancel, but its work is still ${row.state}, not canceled`);
      return;
    }
    if (e.kind === "mutation" && outcome) {
      const want = outcome.kind === "success" ? 1 : 0;
      if (apps !== want)
        throw new Violation("mutation-once", `${step} journaled ${outcome.kind}, but the mutation's app writes committed ${apps} times`);
    }
    if (!row || row.state !== "finished") return;
    const result = JSON.parse(row.result!) as RunResult;
    if (!outcome) {
      if (row.ocState === "done")
        throw new Violation("step-once", `${step}: its work finished ${result.kind} and was journaled, yet the entry is still open`);
      return;
    }
    // A sleep's work returns nothing, and an event wait's work is its timeout, which ends it only if no event did.
    if (e.kind === "sleep" || e.kind === "event") return;
    const kinds: Record<string, string> = { success: "success", failed: "failed", canceled: "canceled" };
    if (kinds[outcome.kind] !== result.kind)
      throw new Violation("step-once", `${step} journaled ${outcome.kind}, but its work finished ${result.kind}`);
    if (result.kind === "success" && JSON.stringify(outcome.value ?? null) !== JSON.stringify(result.returnValue ?? null))
      throw new Violation(
        "step-once",
        `${step} journaled ${JSON.stringify(outcome.value)}, but its work returned ${JSON.stringify(result.returnValue)}`,
      );
  }

  /** no-step-beyond-mismatch: a blocked run gets no new entry (checkEntries) and no new step work. */
  private checkBlocked(run: WfRun, own: readonly WfEntry[], k: KnownRun, works: number): void {
    if (run.state !== "blocked") {
      // A mismatch stays recorded on the run it ended (blocked, then canceled); a run still going has none.
      if (run.blocked !== null && (run.state === "running" || run.state === "canceling"))
        throw new Violation("no-step-beyond-mismatch", `run ${this.runLabel(run.id)} has a mismatch recorded, yet is ${run.state}`);
      k.blocked = null;
      return;
    }
    if (!k.blocked) {
      if (run.blocked === null)
        throw new Violation("no-step-beyond-mismatch", `run ${this.runLabel(run.id)} is blocked with no mismatch recorded`);
      k.blocked = { entries: own.length, works };
      return;
    }
    if (works > k.blocked.works)
      throw new Violation("no-step-beyond-mismatch", `run ${this.runLabel(run.id)} is blocked, yet work for a new step was enqueued`);
  }

  /**
   * A journal is one its workflow's function makes as the process that last advanced it
   * defines it: a patch the other code lacks is skipped where that code journaled another entry.
   * A skip leaves a journal no code made; once the run journals past it, a replay matched it.
   */
  private checkJournal(run: WfRun, own: readonly WfEntry[], k: KnownRun): void {
    if (k.unshaped !== null) {
      if (own.length <= k.unshaped) return;
      k.unshaped = null;
    }
    const calls = own.map((e) => ({ kind: e.kind, name: e.name }));
    const fits = (shapes: readonly WfShape[] | null): boolean => {
      const shape = shapes?.find((s) => s.name === run.name);
      return shape !== undefined && fitsShape(calls, shape, shapes!);
    };
    if (!fits(this.shapes) && !fits(this.changed)) {
      throw new Violation(
        "no-step-beyond-mismatch",
        `run ${this.runLabel(run.id)} (${run.name}) has a journal no definition makes: ${calls.map((c) => `${c.kind} ${c.name}`).join(", ")}`,
      );
    }
  }

  /** wf-on-complete-once: committed once iff delivered, with the run's result kind, never before the run finished. */
  private checkOnComplete(run: WfRun, ocs: readonly string[]): void {
    const name = `run ${this.runLabel(run.id)}`;
    if (ocs.length > 1) throw new Violation("wf-on-complete-once", `${name}'s onComplete committed ${ocs.length} times`);
    if (run.onComplete === null || !FINISHED.has(run.state)) {
      if (ocs.length || run.ocState !== "none")
        throw new Violation("wf-on-complete-once", `${name} is ${run.state} with onComplete ${run.ocState}, committed ${ocs.length} times`);
      return;
    }
    if (run.ocState === "none") throw new Violation("wf-on-complete-once", `${name} finished ${run.state} with onComplete none`);
    if (ocs.length !== (run.ocState === "done" ? 1 : 0))
      throw new Violation("wf-on-complete-once", `${name}'s onComplete is ${run.ocState}, committed ${ocs.length} times`);
    if (ocs.length && ocs[0] !== run.state)
      throw new Violation("wf-on-complete-once", `${name}'s onComplete saw ${ocs[0]}, the run finished ${run.state}`);
  }
}
