/**
 * The invariants, checked against the stored rows after every step of a run and once
 * more at its end. Each violation names its invariant (violation.ts); the limits on
 * running attempts are checked by limits.ts, the order of claims by claim-order.ts, the
 * rate limits on starts by rate-limits.ts, the times of claims and the reasons for lost
 * attempts by attempt-checks.ts.
 */
import type { WorkRow } from "../../src/driver/driver.js";
import type { RunResult, Status } from "../../src/types.js";
import { checkClaimTimes, checkLosses, type LostAbort } from "./attempt-checks.js";
import { checkClaimOrder, checkKeyTurns } from "./claim-order.js";
import type { ClaimSeen, HeartbeatSeen } from "./faulty-driver.js";
import { LimitChecker } from "./limits.js";
import { RateLimitChecker } from "./rate-limits.js";
import type { Snapshot } from "./stores.js";
import { Violation } from "./violation.js";
import { INTERNAL, isWorkflowRow } from "./wf-invariants.js";
import { markedAttempt, type ActionValue, type OcContext, type WorkArgs } from "./workload.js";

export { Violation, type InvariantName } from "./violation.js";

interface Known {
  last: WorkRow;
  result: string | null;
  /** The attempt when the work finished or a cancel was asked: no attempt may start after it. */
  frozenAt: number | null;
  /** The step that first saw it finished or canceled. */
  frozenStep: number | null;
  deleted: boolean;
}

/** What the checker learns besides the rows: the application's calls and what they said. */
export interface Observations {
  /** Works a cancel() call answered true for, with the step of the answer. */
  canceledTrue: Map<string, number>;
  /** Works a cancel() was asked for (whatever it answered). */
  cancelAsked: Set<string>;
  /** Cutoffs of cancelAll() calls made. */
  cancelAllCutoffs: number[];
  /** status() answers to compare with the rows of the same step. */
  statuses: { id: string; status: Status | "unknown" }[];
  /** Ids enqueue resolved with. */
  enqueued: string[];
  /** Action attempts that started since the last check, with their step. */
  started: { id: string; attempt: number; step: number }[];
  /** Claims committed since the last check (the store call of that step made them). */
  claims: ClaimSeen[];
  /** Heartbeats that ran since the last check. */
  heartbeats: HeartbeatSeen[];
  /** Action attempts aborted as lost since the last check. */
  lostAborts: LostAbort[];
  /** Each process's worker id, as its heartbeats name it. */
  workerIds: Map<string, string>;
  /** The result kind each call of the onComplete handler was given, per work (calls that rolled back too). */
  ocCalls: Map<string, string[]>;
}

/** Observations of a run that has made no call yet. */
export function newObservations(): Observations {
  return {
    canceledTrue: new Map(),
    cancelAsked: new Set(),
    cancelAllCutoffs: [],
    statuses: [],
    enqueued: [],
    started: [],
    claims: [],
    heartbeats: [],
    lostAborts: [],
    workerIds: new Map(),
    ocCalls: new Map(),
  };
}

/** Forgets what one step saw, once it was checked (what the run keeps stays). */
export function clearStep(obs: Observations): void {
  obs.statuses = [];
  obs.enqueued = [];
  obs.started = [];
  obs.claims = [];
  obs.heartbeats = [];
  obs.lostAborts = [];
}

/** Checks the invariants of one pool, step by step. */
export class Checker {
  private readonly known = new Map<string, Known>();
  private readonly limits: LimitChecker;
  private readonly rates: RateLimitChecker;

  private readonly retentionMs: number;
  private readonly leaseMs: number;

  constructor(
    config: { retentionMs: number; leaseMs: number },
    private readonly label: (id: string) => string,
    /** The time the run starts at. */
    private readonly t0: number,
  ) {
    this.retentionMs = config.retentionMs;
    this.leaseMs = config.leaseMs;
    this.limits = new LimitChecker(label);
    this.rates = new RateLimitChecker(label, t0);
  }

  /** Checks the rows read after `step`. Throws a Violation. */
  check(step: number, now: number, snapshot: Snapshot, obs: Observations): void {
    const { rows, config, apps, ocs } = snapshot;
    const byId = new Map(rows.map((r) => [r.id, r]));
    // An attempt starts in the step that claimed it: one starting later was claimed after the cancel.
    for (const s of obs.started) {
      const k = this.known.get(s.id);
      const answered = obs.canceledTrue.get(s.id);
      if (answered !== undefined && s.step > answered) {
        throw new Violation("cancel-final", `${this.label(s.id)} started attempt ${s.attempt} after cancel() said it canceled it`);
      }
      if (k?.frozenStep != null) {
        throw new Violation(
          "cancel-final",
          `${this.label(s.id)} started attempt ${s.attempt} after it finished or was canceled (at attempt ${k.frozenAt})`,
        );
      }
    }
    for (const [id, k] of this.known) {
      if (k.deleted || byId.has(id)) continue;
      const r = k.last;
      if (r.state !== "finished" || r.finishedAt === null || r.finishedAt > now - this.retentionMs || r.ocState === "pending") {
        throw new Violation(
          "retention",
          `${this.label(id)} was deleted while ${r.state}${r.finishedAt !== null ? `, finished ${now - r.finishedAt} ms ago (retention ${this.retentionMs} ms)` : ""}, onComplete ${r.ocState}`,
        );
      }
      k.deleted = true;
    }
    for (const id of obs.enqueued) {
      if (!byId.has(id) && !this.known.has(id))
        throw new Violation("nothing-lost", `enqueue resolved with ${this.label(id)}, but no such row is stored`);
    }
    // First: a claim at the wrong time breaks the rate and order checks too, and this says why.
    checkClaimTimes(obs.claims, obs.heartbeats, byId, this.leaseMs, this.label, this.t0);
    checkLosses(obs.lostAborts, byId, obs.workerIds, this.label);
    for (const row of rows) this.checkRow(step, row, apps.get(row.id) ?? 0, ocs.get(row.id) ?? [], obs);
    this.limits.check(step, rows, config);
    this.rates.check(obs.claims, snapshot.rates);
    checkClaimOrder(obs.claims, rows, snapshot, this.label);
    checkKeyTurns(obs.claims, rows, snapshot, this.label);
    for (const { id, status } of obs.statuses) this.checkStatus(id, status, byId.get(id));
  }

  private checkRow(step: number, row: WorkRow, apps: number, ocs: string[], obs: Observations): void {
    const name = this.label(row.id);
    const k = this.known.get(row.id);
    if (k?.result != null) {
      if (row.state !== "finished" || row.result !== k.result) {
        throw new Violation("finish-once", `${name} finished with ${k.result}, then became ${row.state} ${row.result ?? ""}`);
      }
    }
    if (k?.frozenAt != null && row.attempt > k.frozenAt) {
      throw new Violation(
        "cancel-final",
        `${name} reached attempt ${row.attempt} after it finished or was canceled at attempt ${k.frozenAt}`,
      );
    }
    const entry: Known = k ?? { last: row, result: null, frozenAt: null, frozenStep: null, deleted: false };
    entry.last = row;
    if (row.state === "finished" && entry.result === null && k?.last.state === "pending") {
      // Only a cancel finishes pending work; an attempt's result on it came from an attempt that was not current.
      const result = JSON.parse(row.result!) as RunResult;
      if (result.kind !== "canceled")
        throw new Violation("fenced", `${name} went from pending to finished ${result.kind}: a late result was written`);
    }
    // The workflow layer's own work carries no simulated behaviour: wf-invariants.ts checks what it does.
    const internal = row.fnName.startsWith(INTERNAL);
    if (row.state === "finished" && entry.result === null) {
      entry.result = row.result;
      if (!internal) this.checkResult(row, JSON.parse(row.result!) as RunResult, obs);
    }
    if (entry.frozenAt === null && (row.state === "finished" || row.cancelRequested)) {
      entry.frozenAt = row.attempt;
      entry.frozenStep = step;
    }
    this.known.set(row.id, entry);
    const args = JSON.parse(row.args) as WorkArgs;
    const result = row.result === null ? null : (JSON.parse(row.result) as RunResult);
    if (row.kind === "mutation" && !internal) {
      const want = result?.kind === "success" ? 1 : 0;
      if (apps !== want)
        throw new Violation("mutation-once", `${name} (${args.b}, ${row.state}) has ${apps} committed app writes, expected ${want}`);
    }
    if (ocs.length > 1) throw new Violation("on-complete-once", `${name}'s onComplete committed ${ocs.length} times`);
    // A workflow's own onComplete (a step's journal entry, a failed advance) writes no sim_oc row.
    const ocWant = row.onComplete && !row.onComplete.startsWith(INTERNAL) && row.state === "finished" && row.ocState === "done" ? 1 : 0;
    if (ocs.length !== ocWant)
      throw new Violation(
        "on-complete-once",
        `${name}'s onComplete committed ${ocs.length} times while it is ${row.state}, onComplete ${row.ocState}`,
      );
    if (ocWant && ocs[0] !== result!.kind)
      throw new Violation("on-complete-once", `${name}'s onComplete saw ${ocs[0]}, the work finished ${result!.kind}`);
    if (row.onComplete && !row.onComplete.startsWith(INTERNAL) && result) this.checkExcluded(row, result, obs.ocCalls.get(row.id) ?? []);
  }

  /**
   * onCompleteExcludeKinds: for a result kind the work excluded, onComplete is never
   * delivered (oc_state stays none) and its handler is never called with that kind; for
   * any other kind it is delivered (pending, then done or failed; never none).
   */
  private checkExcluded(row: WorkRow, result: RunResult, calls: readonly string[]): void {
    const name = this.label(row.id);
    const excluded = row.context === null ? [] : ((JSON.parse(row.context) as OcContext).x ?? []);
    if (!excluded.includes(result.kind)) {
      if (row.ocState === "none")
        throw new Violation("on-complete-once", `${name} finished ${result.kind} with onComplete none: it is never delivered`);
      return;
    }
    if (row.ocState !== "none")
      throw new Violation("on-complete-once", `${name} finished ${result.kind}, which it excludes, with onComplete ${row.ocState}`);
    // A call given another kind is allowed: its transaction rolled back and the work finished otherwise.
    if (calls.includes(result.kind))
      throw new Violation("on-complete-once", `${name}'s onComplete ran for ${result.kind}, which it excludes`);
  }

  /** The result a work finished with must fit its behaviour, its attempt and the cancels asked. */
  private checkResult(row: WorkRow, result: RunResult, obs: Observations): void {
    const name = this.label(row.id);
    const args = JSON.parse(row.args) as WorkArgs;
    const cancelAsked = obs.cancelAsked.has(row.id) || obs.cancelAllCutoffs.some((c) => row.enqueuedAt < c);
    if (obs.canceledTrue.has(row.id) && result.kind !== "canceled") {
      throw new Violation("right-result", `${name} finished ${result.kind} although cancel() said it canceled it`);
    }
    // A workflow cancels its steps' work itself (the run's cancel, its end, its timeout).
    if (result.kind === "canceled" && !cancelAsked && !isWorkflowRow(row))
      throw new Violation("right-result", `${name} finished canceled, but no cancel was asked`);
    if (result.kind === "success") {
      const ok =
        args.b === "ok" ||
        args.b === "mok" ||
        (args.b === "large" && (args.big ?? 0) < 1_000_000) ||
        (args.b === "throw" && row.attempt >= (args.f ?? Infinity));
      if (!ok) throw new Violation("right-result", `${name} (${args.b}) finished success at attempt ${row.attempt}`);
      if (row.kind === "action") {
        const value = result.returnValue as ActionValue;
        if (value?.a !== row.attempt)
          throw new Violation("fenced", `${name} holds the result of attempt ${value?.a} while on attempt ${row.attempt}`);
      }
    }
    if (result.kind === "failed") {
      const a = markedAttempt(result.error);
      if (a !== null && a !== row.attempt)
        throw new Violation("fenced", `${name} holds the failure of attempt ${a} while on attempt ${row.attempt}`);
      if (a !== null && !["throw", "nonretry", "mthrow"].includes(args.b)) {
        throw new Violation("right-result", `${name} (${args.b}) failed with a handler error it never throws`);
      }
    }
  }

  private checkStatus(id: string, status: Status | "unknown", row: WorkRow | undefined): void {
    const name = this.label(id);
    const k = this.known.get(id);
    if (status === "unknown") {
      if (row || k) throw new Violation("status", `status(${name}) said unknown work, but it is stored or was`);
      return;
    }
    if (!row) {
      if (status.state !== "finished" || !k?.deleted)
        throw new Violation("status", `status(${name}) said ${status.state}, but the row is gone`);
      return;
    }
    const want = row.state;
    let same = status.state === want;
    if (same && status.state === "pending") same = status.previousAttempts === row.attempt;
    if (same && status.state === "running") same = status.previousAttempts === row.attempt - 1;
    if (same && status.state === "finished") same = JSON.stringify(status.result) === JSON.stringify(JSON.parse(row.result!));
    if (!same)
      throw new Violation("status", `status(${name}) said ${JSON.stringify(status)}, the row is ${row.state} at attempt ${row.attempt}`);
  }

  /** The end of a drained run: everything finished, every onComplete delivered. */
  checkEnd(rows: WorkRow[]): void {
    for (const row of rows) {
      if (row.state !== "finished")
        throw new Violation("nothing-lost", `${this.label(row.id)} is still ${row.state} (attempt ${row.attempt}) after the drain`);
      if (row.ocState === "pending")
        throw new Violation("nothing-lost", `${this.label(row.id)}'s onComplete is still pending after the drain`);
    }
  }
}
