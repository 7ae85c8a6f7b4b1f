/**
 * The workflow side of the pool's `telemetry` option (its `workflow` hooks): a run's root
 * span at start, whose context is stored with the run; a span per advance, child of the
 * run's root and linked to the run's previous advance (whose context each advance stores
 * as it commits, so an advance in another process, after a crash, links to it); a span
 * per step once its outcome is given to the function. A pool without these hooks does
 * none of it and stores no context. A hook that throws never fails a run: it is reported
 * once, as a process warning, and the manager traces nothing more.
 */
import type { RunRow } from "../driver/workflow-ops.js";
import { errorText } from "../error-text.js";
import type {
  TraceCarrier,
  WorkflowAdvanceEnd,
  WorkflowAdvanceTrace,
  WorkflowAdvanceTraceInfo,
  WorkflowStartTrace,
  WorkflowTelemetry,
} from "../telemetry.js";
import type { DeliveredStep } from "./observe.js";

/** The trace context stored with a run: its root span's, and its last committed advance's. */
interface StoredTrace {
  run?: TraceCarrier;
  last?: TraceCarrier;
}

/** A started root span of a run. */
export interface StartedRunTrace {
  /** The run's trace column, or null to store none. */
  readonly stored: string | null;
  run<T>(fn: () => T): T;
  end(error?: unknown): void;
}

/** A started advance span. */
export interface StartedAdvanceTrace {
  /** The run's trace column once this advance commits, or null to leave it. */
  readonly stored: string | null;
  run<T>(fn: () => T): T;
  end(result: WorkflowAdvanceEnd): void;
}

/** Guarded workflow telemetry of one pool. */
export class WorkflowTracing {
  private broken = false;

  constructor(
    private readonly hooks: WorkflowTelemetry | null,
    private readonly pool: string,
  ) {}

  /** Whether runs are traced: the engine skips everything else when they are not. */
  get enabled(): boolean {
    return this.hooks !== null && !this.broken;
  }

  /** Starts the root span of a new run; null when not tracing. */
  start(run: { id: string; name: string; parentId: string | null }): StartedRunTrace | null {
    if (!this.enabled) return null;
    try {
      const span: WorkflowStartTrace = this.hooks!.start({
        pool: this.pool,
        workflowId: run.id,
        workflow: run.name,
        parentId: run.parentId,
      });
      const carrier = span.carrier;
      return {
        stored: carrier ? JSON.stringify({ run: carrier } satisfies StoredTrace) : null,
        run: (fn) => this.inSpan(span, fn),
        end: (error) => this.guard("workflow start span's end", () => span.end(error)),
      };
    } catch (e) {
      this.fail("workflow start", e);
      return null;
    }
  }

  /** Starts the span of an advance of `run`; null when not tracing. */
  advance(run: RunRow, mode: WorkflowAdvanceTraceInfo["mode"]): StartedAdvanceTrace | null {
    if (!this.enabled) return null;
    const stored = readStored(run.trace);
    try {
      const span: WorkflowAdvanceTrace = this.hooks!.advance({
        pool: this.pool,
        workflowId: run.id,
        workflow: run.name,
        mode,
        run: stored.run,
        previous: stored.last,
      });
      const carrier = span.carrier;
      return {
        stored: carrier ? JSON.stringify({ ...stored, last: carrier } satisfies StoredTrace) : null,
        run: (fn) => this.inSpan(span, fn),
        end: (result) => this.guard("workflow advance span's end", () => span.end(result)),
      };
    } catch (e) {
      this.fail("workflow advance", e);
      return null;
    }
  }

  /** Records the steps of `run` whose outcomes an advance gave its function. */
  steps(run: RunRow, steps: readonly DeliveredStep[]): void {
    if (!this.enabled || !steps.length) return;
    const root = readStored(run.trace).run;
    for (const s of steps) {
      // Values and patch markers have no work and no outcome to deliver.
      if (s.kind === "value" || s.kind === "patch") continue;
      const o = s.outcome;
      this.guard("workflow step", () =>
        this.hooks!.step({
          pool: this.pool,
          workflowId: run.id,
          workflow: run.name,
          run: root,
          n: s.n,
          kind: s.kind as Exclude<DeliveredStep["kind"], "value" | "patch">,
          name: s.name,
          outcome: o.kind,
          ...(o.kind === "failed" ? { error: o.error } : {}),
          startedAt: s.startedAt,
          finishedAt: s.finishedAt,
          ...(s.workId === null ? {} : { workId: s.workId }),
          ...(s.childId === null ? {} : { childId: s.childId }),
        }),
      );
    }
  }

  /** Runs `fn`, a write that moves `run` on from outside it, in the run's trace when it has one. */
  within<T>(run: Pick<RunRow, "trace">, fn: () => T): T {
    const hooks = this.enabled ? this.hooks! : null;
    const root = hooks?.within && run.trace !== null ? readStored(run.trace).run : undefined;
    if (!root) return fn();
    return this.inSpan({ run: <R>(f: () => R): R => hooks!.within!(root, f) }, fn);
  }

  /** Runs `fn` in `span`; if the span's run() throws before calling fn, fn runs outside it. */
  private inSpan<T>(span: { run<R>(f: () => R): R }, fn: () => T): T {
    let called = false;
    try {
      return span.run(() => {
        called = true;
        return fn();
      });
    } catch (e) {
      if (called) throw e;
      this.fail("workflow span's run", e);
      return fn();
    }
  }

  private guard(what: string, fn: () => void): void {
    if (this.broken) return;
    try {
      fn();
    } catch (e) {
      this.fail(what, e);
    }
  }

  private fail(what: string, e: unknown): void {
    if (this.broken) return;
    this.broken = true;
    process.emitWarning(`workpool: the telemetry's ${what} threw (${errorText(e)}); this pool's workflows trace nothing more`, {
      code: "WORKPOOL_TELEMETRY_THREW",
    });
  }
}

/** The stored trace of a run; empty when there is none or it cannot be read. */
function readStored(text: string | null): StoredTrace {
  if (text === null) return {};
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v !== "object" || v === null) return {};
    const { run, last } = v as Record<string, unknown>;
    const out: StoredTrace = {};
    if (isCarrier(run)) out.run = run;
    if (isCarrier(last)) out.last = last;
    return out;
  } catch {
    return {};
  }
}

function isCarrier(v: unknown): v is TraceCarrier {
  return typeof v === "object" && v !== null && Object.values(v).every((x) => typeof x === "string");
}
