/**
 * One execution of a workflow function: the step calls it makes, numbered in call order,
 * each checked against the journal entry recorded at its number, and the outcomes given
 * back to it. An execution lives across advances while its process keeps the run; after a
 * crash, a deploy or an eviction a new one replays the journal (see advance.ts).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { StepKind, StepRow } from "../driver/workflow-ops.js";
import { InvalidArgumentError } from "../errors.js";
import type { JsonValue } from "../types.js";
import { StepFailedError, WorkflowCanceledError } from "./errors.js";
import type { BlockedInfo, StepCallInfo } from "./types.js";

/** What a step's work needs to be written: its enqueue, sleep, wait or child run. */
export type StepRequest =
  | { kind: "action" | "mutation"; handle: unknown; handler: string; args: string; options: Record<string, unknown> }
  | { kind: "sleep"; ms: number }
  | { kind: "event"; name: string; timeoutMs: number | null }
  | { kind: "workflow"; workflow: string; args: string }
  | { kind: "value"; name: "now" | "random" | "uuid"; value: JsonValue }
  /** A step.patched() marker (patches.ts). */
  | { kind: "patch"; id: string };

/** One step call of the execution. */
export interface StepCall {
  n: number;
  request: StepRequest;
  /** The outcome given to it in the advance that made it (a step called in a canceling run before the function saw the cancel). */
  endedAtCall?: StepOutcome;
  /** Settled by deliver(); value calls are settled when made. */
  settled: boolean;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** The journaled outcome of a step, as stored in its entry. */
export type StepOutcome =
  | { kind: "success"; value?: JsonValue }
  | { kind: "failed"; error: string; data?: JsonValue }
  /**
   * `by` is set when the run's cancel (or timeout) ended the step: the await sees a
   * WorkflowCanceledError with `message`. `byCode` is set when the function's own code
   * ended it (a step.map failing fast): the await sees a StepFailedError with `message`.
   */
  | { kind: "canceled"; by?: "cancel" | "timeout"; byCode?: true; message?: string }
  | { kind: "event"; value: JsonValue }
  | { kind: "timeout" };

/** How the function ended. */
export type Ending = { ok: true; value: unknown } | { ok: false; error: unknown };

/** A journal entry's kind and name as a determinism check sees it. */
export function entryInfo(e: Pick<StepRow, "kind" | "name">): StepCallInfo {
  return e.kind === "value" ? { kind: e.name as "now" | "random" | "uuid", name: e.name } : { kind: e.kind, name: e.name };
}

/** A request's kind and name as a determinism check sees it. */
export function requestInfo(r: StepRequest): StepCallInfo {
  switch (r.kind) {
    case "action":
    case "mutation":
      return { kind: r.kind, name: r.handler };
    case "sleep":
      return { kind: "sleep", name: "sleep" };
    case "event":
      return { kind: "event", name: r.name };
    case "workflow":
      return { kind: "workflow", name: r.workflow };
    case "value":
      return { kind: r.name, name: r.name };
    case "patch":
      return { kind: "patch", name: r.id };
  }
}

/** The journal kind and name a request is stored under. */
export function requestEntry(r: StepRequest): { kind: StepKind; name: string } {
  const info = requestInfo(r);
  return r.kind === "value" ? { kind: "value", name: r.name } : { kind: r.kind, name: info.name };
}

/** The execution whose function the current async context belongs to. */
const running = new AsyncLocalStorage<Execution>();

/** Runs one workflow function against a journal. */
export class Execution {
  readonly calls: StepCall[] = [];
  ending: Ending | null = null;
  /** Set when a call did not match the journal: nothing more is given to the function. */
  blocked: BlockedInfo | null = null;
  /** Set once the function was given a WorkflowCanceledError: steps it calls after that (clean-up) run. */
  cancelSeen = false;
  /** Calls the function's own code ended since the last commit (see endCalls), by position: the commit writes them. */
  private ended = new Map<number, StepOutcome>();

  /**
   * @param recorded the run's journal, by position (entries the function must call again)
   * @param newValue makes the value of a now/random/uuid call that the journal does not have
   */
  constructor(
    private recorded: readonly StepRow[],
    private readonly newValue: (name: "now" | "random" | "uuid") => JsonValue,
  ) {}

  /** Calls the function; it runs until it awaits a step. */
  start(run: () => Promise<unknown>): void {
    let result: Promise<unknown>;
    try {
      result = Promise.resolve(running.run(this, run));
    } catch (e) {
      result = Promise.reject(e);
    }
    result.then(
      (value) => this.end({ ok: true, value }),
      (error: unknown) => this.end({ ok: false, error }),
    );
  }

  private end(ending: Ending): void {
    if (this.ending === null) this.ending = ending;
  }

  /** Whether the function may still make calls. */
  get open(): boolean {
    return this.ending === null && this.blocked === null;
  }

  /** The journal an advance continues from (its entries up to the calls made). */
  useJournal(recorded: readonly StepRow[]): void {
    this.recorded = recorded;
  }

  /** The journal entry at the position the next call takes, if the journal has one. */
  nextEntry(): StepRow | undefined {
    return this.recorded[this.calls.length];
  }

  /** Whether the calling code runs inside this execution's function (a step call from elsewhere is refused). */
  get inside(): boolean {
    return running.getStore() === this;
  }

  /** A step call: numbered, checked against the journal, and returned as a promise. */
  call(request: StepRequest): Promise<unknown> {
    if (this.ending !== null) {
      return Promise.reject(new InvalidArgumentError("step", "was called after the workflow function returned; await every step call"));
    }
    const n = this.calls.length;
    const entry = this.recorded[n];
    if (entry !== undefined) {
      const expected = requestInfo(request);
      const got = entryInfo(entry);
      if (expected.kind !== got.kind || expected.name !== got.name) this.block({ n, expected, recorded: got });
    }
    let resolve!: (v: unknown) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<unknown>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // A blocked execution's calls never settle: the function makes no further progress.
    if (this.blocked) return new Promise(() => undefined);
    const call: StepCall = { n, request, settled: false, resolve, reject };
    this.calls.push(call);
    if (request.kind === "value" || request.kind === "patch") {
      call.settled = true;
      resolve(request.kind === "value" ? request.value : true);
    }
    return promise;
  }

  /** The value a now/random/uuid call returns: the journal's, or a new one. */
  value(name: "now" | "random" | "uuid"): JsonValue {
    const entry = this.recorded[this.calls.length];
    if (entry?.kind === "value" && entry.name === name && entry.outcome !== null) {
      return (JSON.parse(entry.outcome) as { value: JsonValue }).value;
    }
    return this.newValue(name);
  }

  /** Gives step n's journaled outcome to the function. */
  deliver(n: number, outcome: StepOutcome): void {
    const call = this.calls[n];
    if (!call) {
      // The journal gave step n an outcome, but this code never called step n.
      const entry = this.recorded[n];
      this.block({ n, expected: null, recorded: entry ? entryInfo(entry) : null });
      return;
    }
    if (call.settled) return;
    call.settled = true;
    switch (outcome.kind) {
      case "success":
        call.resolve(call.request.kind === "sleep" ? undefined : (outcome.value ?? null));
        return;
      case "event":
        call.resolve({ kind: "event", value: outcome.value });
        return;
      case "timeout":
        call.resolve({ kind: "timeout" });
        return;
      case "failed":
        call.reject(new StepFailedError(outcome.error, n, "failed", outcome.data));
        return;
      case "canceled":
        if (outcome.by) this.cancelSeen = true;
        call.reject(
          outcome.by
            ? new WorkflowCanceledError(outcome.message)
            : new StepFailedError(outcome.message ?? `step ${n} was canceled`, n, "canceled"),
        );
    }
  }

  /**
   * Ends open calls at the function's own request (a step.map failing fast): each is given
   * `outcome` now, and the next commit ends its entry and cancels its work. A replay ends
   * them again where the code does; an entry the journal gave another outcome meanwhile is
   * left open, to be given that outcome in its round.
   */
  endCalls(calls: readonly StepCall[], outcome: StepOutcome & { kind: "canceled"; byCode: true }): void {
    for (const c of calls) {
      if (c.settled) continue;
      const entry = this.recorded[c.n];
      if (entry?.outcome != null) {
        const stored = JSON.parse(entry.outcome) as StepOutcome;
        if (stored.kind !== "canceled" || !stored.byCode) continue;
        this.deliver(c.n, stored);
        continue;
      }
      this.ended.set(c.n, outcome);
      this.deliver(c.n, outcome);
    }
  }

  /** The calls ended by endCalls() since the last call of this, by position. */
  takeEnded(): Map<number, StepOutcome> {
    const ended = this.ended;
    this.ended = new Map();
    return ended;
  }

  /** Records a determinism mismatch (the first one wins). */
  block(info: BlockedInfo): void {
    this.blocked ??= info;
  }

  /** Lets the function run until it waits on steps again (one turn of the event loop). */
  static settle(): Promise<void> {
    return new Promise((r) => setImmediate(r));
  }
}
