/**
 * What `workpool/opentelemetry` shares between its pool and workflow spans: a span context
 * as the W3C trace context stored with work and runs, and back, and a failed span.
 */
import { createTraceState, SpanStatusCode, trace, type Span, type SpanContext } from "@opentelemetry/api";
import type { TraceCarrier } from "../telemetry.js";

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The span's context as W3C trace context fields; undefined for a span that is not recorded anywhere. */
export function toCarrier(sc: SpanContext): TraceCarrier | undefined {
  if (!trace.isSpanContextValid(sc)) return undefined;
  const carrier: Record<string, string> = {
    traceparent: `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, "0")}`,
  };
  const state = sc.traceState?.serialize();
  if (state) carrier.tracestate = state;
  return carrier;
}

/** The stored context, or undefined if there is none or it is malformed. */
export function fromCarrier(carrier: TraceCarrier | undefined): SpanContext | undefined {
  const m = carrier?.traceparent === undefined ? null : TRACEPARENT.exec(carrier.traceparent);
  if (!m) return undefined;
  const sc: SpanContext = { traceId: m[1]!, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16), isRemote: true };
  if (carrier!.tracestate) sc.traceState = createTraceState(carrier!.tracestate);
  return trace.isSpanContextValid(sc) ? sc : undefined;
}

/** Records `error` on `span` and sets its status to ERROR. */
export function failSpan(span: Span, error: unknown): void {
  const e = error instanceof Error ? error : new Error(String(error));
  span.recordException(e);
  span.setAttribute("error.type", e.name);
  span.setStatus({ code: SpanStatusCode.ERROR, message: e.message });
}
