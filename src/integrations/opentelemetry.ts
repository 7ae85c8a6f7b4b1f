/**
 * `workpool/opentelemetry`: traces a pool with OpenTelemetry.
 * `new Workpool(store, { telemetry: openTelemetry() })` gives every enqueue call a
 * PRODUCER span, every attempt a CONSUMER span and every onComplete delivery an INTERNAL
 * span. The enqueue's trace context is stored with the work (as W3C trace context,
 * whatever propagator the app registers), so an attempt that runs minutes later in
 * another process continues the trace that enqueued it. Attributes follow the messaging
 * semantic conventions (`messaging.system` = `workpool`, the pool as destination).
 */
import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type Tracer,
  type TracerProvider,
} from "@opentelemetry/api";
import { InvalidArgumentError } from "../errors.js";
import { checkOptionKeys, optionKeys } from "../checks.js";
import type { AttemptEnd, AttemptTrace, AttemptTraceInfo, EnqueueTrace, EnqueueTraceInfo, Telemetry } from "../telemetry.js";
import { failSpan, fromCarrier, toCarrier } from "./opentelemetry-context.js";
import { workflowTelemetry } from "./opentelemetry-workflow.js";

/** Options of {@link openTelemetry}. */
export interface OpenTelemetryOptions {
  /** Where the spans go. Default: the globally registered provider. */
  tracerProvider?: TracerProvider;
  /**
   * true (default): an attempt's span is a child of the span that enqueued its work, in the
   * same trace. false: each attempt starts a trace of its own, linked to the enqueue (for
   * work that runs long after it was enqueued). Either way the span links to the enqueue.
   */
  attemptsJoinTrace?: boolean;
}

const OPTION_KEYS = optionKeys<OpenTelemetryOptions>()({ tracerProvider: true, attemptsJoinTrace: true });

/** The telemetry for the `telemetry` option of a Workpool or ActionRetrier. */
export function openTelemetry(options?: OpenTelemetryOptions): Telemetry {
  const o = (options === undefined ? {} : checkOptionKeys("options", options, OPTION_KEYS, "openTelemetry()")) as OpenTelemetryOptions;
  if (o.tracerProvider !== undefined && typeof (o.tracerProvider as { getTracer?: unknown }).getTracer !== "function") {
    throw new InvalidArgumentError("tracerProvider", "must be an OpenTelemetry TracerProvider (with getTracer())");
  }
  if (o.attemptsJoinTrace !== undefined && typeof o.attemptsJoinTrace !== "boolean") {
    throw new InvalidArgumentError("attemptsJoinTrace", "must be a boolean");
  }
  const join = o.attemptsJoinTrace ?? true;
  // Looked up at each span: an SDK registered after the pool was made is still used.
  const tracer = (): Tracer => (o.tracerProvider ?? trace.getTracerProvider()).getTracer("workpool");

  function startConsumer(info: AttemptTraceInfo, name: string, kind: SpanKind, attributes: Attributes): AttemptTrace {
    const enqueued = fromCarrier(info.carrier);
    const parent = enqueued && join ? trace.setSpanContext(ROOT_CONTEXT, enqueued) : ROOT_CONTEXT;
    const span = tracer().startSpan(
      name,
      { kind, attributes, links: enqueued ? [{ context: enqueued }] : [], root: parent === ROOT_CONTEXT },
      parent,
    );
    const active = trace.setSpan(parent, span);
    return { run: (fn) => context.with(active, fn), end: (result) => endAttempt(span, result) };
  }

  return {
    enqueue(info: EnqueueTraceInfo): EnqueueTrace {
      const attributes: Attributes = {
        ...workAttributes(info.pool, info.handler, info.kind),
        "messaging.operation.type": "send",
        "messaging.operation.name": "enqueue",
      };
      if (info.count !== 1) attributes["messaging.batch.message_count"] = info.count;
      const span = tracer().startSpan(`enqueue ${info.pool}`, { kind: SpanKind.PRODUCER, attributes }, context.active());
      return {
        carrier: toCarrier(span.spanContext()),
        end(result) {
          if ("error" in result) failSpan(span, result.error);
          else if (result.workIds.length === 1) span.setAttribute("messaging.message.id", result.workIds[0]!);
          span.end();
        },
      };
    },

    attempt(info: AttemptTraceInfo): AttemptTrace {
      const attributes: Attributes = {
        ...workAttributes(info.pool, info.handler, info.kind),
        "messaging.operation.type": "process",
        "messaging.operation.name": "process",
        "messaging.message.id": info.workId,
        "workpool.attempt": info.attempt,
      };
      if (info.priority !== 0) attributes["workpool.priority"] = info.priority;
      if (info.key !== null) attributes["workpool.key"] = info.key;
      return startConsumer(info, `process ${info.pool}`, SpanKind.CONSUMER, attributes);
    },

    onComplete(info: AttemptTraceInfo): AttemptTrace {
      return startConsumer(info, `onComplete ${info.pool}`, SpanKind.INTERNAL, {
        ...workAttributes(info.pool, info.handler, "onComplete"),
        "messaging.message.id": info.workId,
      });
    },

    workflow: workflowTelemetry(tracer, join),
  };
}

/** The attributes every span of a pool's work has: the system, the pool as destination, the handler. */
function workAttributes(pool: string, handler: string, kind: string): Attributes {
  return {
    "messaging.system": "workpool",
    "messaging.destination.name": pool,
    "workpool.handler": handler,
    "workpool.work.kind": kind,
  };
}

function endAttempt(span: Span, result: AttemptEnd): void {
  span.setAttribute("workpool.attempt.outcome", result.outcome);
  if (result.outcome === "failed" || result.outcome === "retrying") {
    span.recordException({ name: result.errorName ?? "Error", message: result.error, stack: result.stack });
    span.setAttribute("error.type", result.errorName ?? "Error");
    span.setStatus({ code: SpanStatusCode.ERROR, message: result.error });
  }
  span.end();
}
