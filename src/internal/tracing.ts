/**
 * The pool's side of the `telemetry` option: starts and ends the spans of enqueues,
 * attempts and onComplete deliveries. A hook that throws never fails the work: it is
 * reported once, as a process warning, and the pool traces nothing more.
 */
import type { OnCompleteWrite, WorkRow } from "../driver/driver.js";
import { errorText } from "../error-text.js";
import type { CompletedEvent } from "../events.js";
import { canRetry } from "../retry.js";
import type { AttemptEnd, AttemptTrace, AttemptTraceInfo, EnqueueTrace, EnqueueTraceInfo, Telemetry, TraceCarrier } from "../telemetry.js";
import type { WorkId } from "../types.js";
import type { AttemptOutcome } from "./transitions/attempt-outcome.js";
import { readMeta } from "./work-meta.js";

/** Most fields, and longest field, a stored carrier may have. */
const MAX_FIELDS = 8;
const MAX_FIELD_LENGTH = 512;

/** What the enqueue path needs from a started enqueue span. */
export interface StartedEnqueue {
  carrier: Record<string, string> | undefined;
  end(result: { workIds: readonly WorkId[] } | { error: unknown }): void;
}

/** Guarded telemetry of one pool. */
export class Tracing {
  private broken = false;

  constructor(private readonly telemetry: Telemetry | null) {}

  /** Whether the pool traces: hot paths skip everything else when it does not. */
  get enabled(): boolean {
    return this.telemetry !== null && !this.broken;
  }

  /** Starts an enqueue call's span; null when the pool does not trace. */
  enqueue(info: EnqueueTraceInfo): StartedEnqueue | null {
    if (!this.enabled) return null;
    let span: EnqueueTrace;
    try {
      span = this.telemetry!.enqueue(info);
      return { carrier: checkedCarrier(span.carrier), end: (r) => this.guard("enqueue span's end", () => span.end(r)) };
    } catch (e) {
      this.fail("enqueue", e);
      return null;
    }
  }

  /**
   * Runs `fn`, one attempt of `row` (or its onComplete delivery), inside its span, and ends
   * the span with what `ending` makes of fn's result. When fn throws (the store could not
   * record the attempt), the span ends `released`: the attempt will run again.
   */
  async span<T>(
    hook: "attempt" | "onComplete",
    pool: string,
    row: WorkRow,
    fn: () => Promise<T>,
    ending: (value: T) => AttemptEnd,
  ): Promise<T> {
    const start = this.enabled ? this.telemetry![hook]?.bind(this.telemetry) : undefined;
    if (!start) return fn();
    let span: AttemptTrace;
    try {
      span = start(attemptInfo(pool, row, hook));
    } catch (e) {
      this.fail(hook, e);
      return fn();
    }
    let called = false;
    let value: T;
    try {
      value = await span.run(() => {
        called = true;
        return fn();
      });
    } catch (e) {
      if (!called) {
        this.fail(`${hook} span's run`, e);
        return fn();
      }
      this.guard(`${hook} span's end`, () => span.end({ outcome: "released" }));
      throw e;
    }
    this.guard(`${hook} span's end`, () => span.end(ending(value)));
    return value;
  }

  private guard(what: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.fail(what, e);
    }
  }

  private fail(what: string, e: unknown): void {
    if (this.broken) return;
    this.broken = true;
    process.emitWarning(`workpool: the telemetry's ${what} threw (${errorText(e)}); this pool traces nothing more`, {
      code: "WORKPOOL_TELEMETRY_THREW",
    });
  }
}

function attemptInfo(pool: string, row: WorkRow, hook: "attempt" | "onComplete"): AttemptTraceInfo {
  return {
    pool,
    workId: row.id as WorkId,
    handler: hook === "onComplete" ? row.onComplete! : row.fnName,
    kind: hook === "onComplete" ? "onComplete" : row.kind,
    attempt: row.attempt,
    priority: row.priority,
    key: row.key,
    enqueuedAt: row.enqueuedAt,
    carrier: readMeta(row).trace,
  };
}

/** The carrier as stored: string fields only, within the limits; undefined when empty. */
function checkedCarrier(carrier: TraceCarrier | undefined): Record<string, string> | undefined {
  if (typeof carrier !== "object" || carrier === null) return undefined;
  const out: Record<string, string> = {};
  let n = 0;
  for (const [k, v] of Object.entries(carrier)) {
    if (typeof v !== "string" || k.length > MAX_FIELD_LENGTH || v.length > MAX_FIELD_LENGTH || v.includes("\u0000")) continue;
    if (++n > MAX_FIELDS) break;
    out[k] = v;
  }
  return n ? out : undefined;
}

/** How an action attempt's span ends, from its outcome (null: taken away from this worker). */
export function actionEnd(row: WorkRow, outcome: AttemptOutcome | null): AttemptEnd {
  if (outcome === null) return { outcome: "released" };
  if (outcome.kind !== "failed") return { outcome: outcome.kind };
  const end: AttemptEnd = {
    outcome: outcome.retryable && canRetry(row.retry, row.attempt) ? "retrying" : "failed",
    error: outcome.error,
  };
  if (outcome.detail?.name !== undefined) end.errorName = outcome.detail.name;
  if (outcome.detail?.stack !== undefined) end.stack = outcome.detail.stack;
  return end;
}

/** How a mutation attempt's span ends, from the events its transaction made. */
export function mutationEnd(row: WorkRow, events: readonly CompletedEvent[]): AttemptEnd {
  const e = events.find((x) => x.workId === row.id);
  if (!e) return { outcome: "released" };
  if (e.status === "success" || e.status === "canceled") return { outcome: e.status };
  return { outcome: e.status, error: e.error ?? "" };
}

/** How an onComplete delivery's span ends, from what it recorded. */
export function onCompleteEnd(write: OnCompleteWrite): AttemptEnd {
  if (write.ocState === "done") return { outcome: "success" };
  return { outcome: write.ocState === "pending" ? "retrying" : "failed", error: write.ocError ?? "" };
}
