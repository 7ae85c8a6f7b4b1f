/**
 * The invariants of a pool's workflows, checked on the stored runs, journals, events and
 * work rows after every step that ran a store call (see docs/testing.md for why each holds):
 * step-once, mutation-once (a mutation step's app write agrees with its entry),
 * wf-on-complete-once, no-step-beyond-mismatch, events-once (wf-events.ts), cancel-final,
 * run-final, and map-window, map-fail-fast and patch-marker (wf-map-checks.ts).
 */
import type { WorkRow } from "../../src/driver/driver.js";
import type { RunResult } from "../../src/types.js";
import { Violation } from "./violation.js";
import { MapChecker } from "./wf-map-checks.js";
import { byRun, checkEvents, outcomeOf } from "./wf-events.js";
import type { WfEntry, WfRun, WfSnapshot } from "./wf-rows.js";
import { CLEANUP, fitsShape, type WfShape } from "./wf-shapes.js";

/** The onComplete of a step's work, which journals its outcome. */
export const STEP_DONE = "workpool:workflow.step-done";
/** The prefix of the workflow layer's own handlers. */
export const INTERNAL = "workpool:workflow.";
const EVENT_TIMEOUT = "workpool:workflow.event-timeout";
const FINISHED = new Set(["success", "failed", "canceled"]);

/** Whether a work row belongs to a workflow: a step's work, or the layer's own work (advances, timeouts). */
export function isWorkflowRow(row: Pick<WorkRow, "fnName" | "onComplete">): boolean {
  return row.fnName.startsWith(INTERNAL) || row.onComplete === STEP_DONE;
}

/** What the application did to runs: the checker compares it with what the runs did. */
export interface WfObservations {
  /** Runs cancel() was called for. */
  cancelAsked: Set<string>;
  /** Runs cancel() answered true for. */
  canceledTrue: Set<string>;
}

interface KnownEntry {
  kind: string;
  name: string;
  state: string;
  outcome: string | null;
  workId: string | null;
  childId: string | null;
}

interface KnownRun {
  state: string;
  result: string | null;
  /** Set once the run was seen canceling (or ended by a cancel or its timeout): its reason. */
  cancel: { reason: string | null } | null;
  /** While blocked: its entries and its steps' work when first seen blocked. */
  blocked: { entries: number; works: number } | null;
  entries: Map<number, KnownEntry>;
  /** The run as last read: whether retention may delete it. */
  last: WfRun | null;
}

/** Checks a pool's workflows step by step. */
export class WorkflowChecker {
  private readonly runs = new Map<string, KnownRun>();
  /** The work enqueued for each step (`run n`, or `run n timeout` for an event wait's timeout): one per step, ever. */
  private readonly stepWork = new Map<string, string>();
  private readonly maps: MapChecker;

  constructor(
    /** The run's workflow shapes, and the changed ones some processes define (or null). */
    private readonly shapes: readonly WfShape[],
    private readonly changed: readonly WfShape[] | null,
    private readonly label: (id: string) => string,
    private readonly runLabel: (id: string) => string,
  ) {
    this.maps = new MapChecker(shapes, changed, label, runLabel);
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
    const works = this.checkStepWork(rows);
    const entries = byRun(wf.entries);
    const events = byRun(wf.events);
    const seen = new Set<string>();
    for (const run of wf.runs) {
      seen.add(run.id);
      const own = entries.get(run.id) ?? [];
      const k = this.known(run);
      this.checkRunResult(run, k, obs);
      this.checkEntries(run, own, k, rowById, apps);
      this.checkBlocked(run, own, k, works.get(run.id) ?? 0);
      this.checkJournal(run, own);
      this.maps.check(run, own, rowById);
      this.checkOnComplete(run, ocs.get(run.id) ?? []);
      checkEvents(run.id, own, events.get(run.id) ?? [], this.runLabel);
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

  /** At most one work per step, ever; returns how many steps of each run have work. */
  private checkStepWork(rows: readonly WorkRow[]): Map<string, number> {
    for (const r of rows) {
      let key: string | null = null;
      if (r.onComplete === STEP_DONE && r.context !== null) {
        const c = JSON.parse(r.context) as { r: string; n: number };
        key = `${c.r} ${c.n}`;
      } else if (r.fnName === EVENT_TIMEOUT) {
        const a = JSON.parse(r.args) as { r: string; n: number };
        key = `${a.r} ${a.n} timeout`;
      }
      if (key === null) continue;
      const before = this.stepWork.get(key);
      if (before !== undefined && before !== r.id) {
        const [run, n] = key.split(" ");
        throw new Violation(
          "step-once",
          `run ${this.runLabel(run!)}: step ${n} got a second work ${this.label(r.id)}${key.endsWith("timeout") ? " (timeout)" : ""}, after ${this.label(before)}`,
        );
      }
      this.stepWork.set(key, r.id);
    }
    const perRun = new Map<string, number>();
    for (const key of this.stepWork.keys()) {
      const run = key.slice(0, key.indexOf(" "));
      perRun.set(run, (perRun.get(run) ?? 0) + 1);
    }
    return perRun;
  }

  private known(run: WfRun): KnownRun {
    let k = this.runs.get(run.id);
    if (!k) {
      k = { state: run.state, result: null, cancel: null, blocked: null, entries: new Map(), last: null };
      this.runs.set(run.id, k);
    }
    return k;
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
      k.entries.set(e.n, { kind: e.kind, name: e.name, state: e.state, outcome: e.outcome, workId: e.workId, childId: e.childId });
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
   */
  private checkJournal(run: WfRun, own: readonly WfEntry[]): void {
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
