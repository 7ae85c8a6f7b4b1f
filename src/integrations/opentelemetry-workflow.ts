/**
 * The workflow spans of `workpool/opentelemetry`: one trace per run. A run's root span
 * (`workflow <name>`) is made at start, a child of the span active there (or, with
 * `attemptsJoinTrace: false`, the root of a trace of its own, linked to it); its context
 * is stored with the run. Each advance (`advance <name>`) is a child of that root, linked
 * to the run's previous advance, and the work of the steps it starts is enqueued inside
 * it; each step (`step <name>`) is a child of the root that spans the step from its call
 * to its outcome. An event sent, a cancel or a restart enqueues the advance it makes in the
 * run's trace.
 */
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Tracer } from "@opentelemetry/api";
import type {
  WorkflowAdvanceTrace,
  WorkflowAdvanceTraceInfo,
  WorkflowStartTrace,
  WorkflowStepTraceInfo,
  WorkflowTelemetry,
  WorkflowTraceInfo,
} from "../telemetry.js";
import { failSpan, fromCarrier, toCarrier } from "./opentelemetry-context.js";

/** The workflow hooks, with `tracer()` looked up at each span. */
export function workflowTelemetry(tracer: () => Tracer, join: boolean): WorkflowTelemetry {
  return {
    start(info): WorkflowStartTrace {
      const active = context.active();
      const caller = trace.getSpanContext(active);
      const parent = join ? active : ROOT_CONTEXT;
      const attributes = runAttributes(info);
      if (info.parentId !== null) attributes["workpool.workflow.parent_id"] = info.parentId;
      const span = tracer().startSpan(
        `workflow ${info.workflow}`,
        { kind: SpanKind.INTERNAL, attributes, links: !join && caller ? [{ context: caller }] : [], root: parent === ROOT_CONTEXT },
        parent,
      );
      const inside = trace.setSpan(parent, span);
      return {
        carrier: toCarrier(span.spanContext()),
        run: (fn) => context.with(inside, fn),
        end(error) {
          if (error !== undefined) failSpan(span, error);
          span.end();
        },
      };
    },

    advance(info: WorkflowAdvanceTraceInfo): WorkflowAdvanceTrace {
      const previous = fromCarrier(info.previous);
      const parent = runContext(info.run);
      const span = tracer().startSpan(
        `advance ${info.workflow}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: { ...runAttributes(info), "workpool.workflow.advance.mode": info.mode },
          links: previous ? [{ context: previous }] : [],
          root: parent === ROOT_CONTEXT,
        },
        parent,
      );
      const inside = trace.setSpan(parent, span);
      return {
        carrier: toCarrier(span.spanContext()),
        run: (fn) => context.with(inside, fn),
        end(result) {
          if (result.outcome === "error") {
            span.setAttribute("workpool.workflow.advance.outcome", "error");
            failSpan(span, result.error);
          } else {
            span.setAttribute("workpool.workflow.advance.outcome", result.outcome);
            span.setAttribute("workpool.workflow.replayed_entries", result.replayedEntries);
          }
          span.end();
        },
      };
    },

    step(info: WorkflowStepTraceInfo): void {
      const parent = runContext(info.run);
      const attributes: Attributes = {
        ...runAttributes(info),
        "workpool.workflow.step": info.n,
        "workpool.workflow.step.kind": info.kind,
        "workpool.workflow.step.outcome": info.outcome,
      };
      if (info.workId !== undefined) attributes["messaging.message.id"] = info.workId;
      if (info.childId !== undefined) attributes["workpool.workflow.child_id"] = info.childId;
      const span = tracer().startSpan(
        `step ${info.name}`,
        { kind: SpanKind.INTERNAL, attributes, startTime: info.startedAt, root: parent === ROOT_CONTEXT },
        parent,
      );
      if (info.outcome === "failed") span.setStatus({ code: SpanStatusCode.ERROR, message: info.error ?? "" });
      span.end(info.finishedAt);
    },

    within(run, fn) {
      const root = fromCarrier(run);
      return root ? context.with(trace.setSpanContext(ROOT_CONTEXT, root), fn) : fn();
    },
  };
}

/** The attributes every span of a run has. */
function runAttributes(info: WorkflowTraceInfo): Attributes {
  return {
    "messaging.system": "workpool",
    "messaging.destination.name": info.pool,
    "workpool.workflow.name": info.workflow,
    "workpool.workflow.id": info.workflowId,
  };
}

/** The run's root span as a parent; a new trace when the run stored none. */
function runContext(carrier: WorkflowAdvanceTraceInfo["run"]): Context {
  const root = fromCarrier(carrier);
  return root ? trace.setSpanContext(ROOT_CONTEXT, root) : ROOT_CONTEXT;
}
