/**
 * A work's meta: the per-work options the runtime reads after enqueue
 * (`onCompleteExcludeKinds`, `logLevel`) and the trace context of the enqueue, stored
 * with the row as one JSON text (NULL when there is none, as for most work).
 */
import type { WorkFields } from "../driver/driver.js";
import type { LogLevel } from "../events.js";
import { LOG_LEVELS } from "../events.js";
import type { ResultKind } from "../types.js";

/** What a row's meta holds. */
export interface WorkMeta {
  /** Result kinds whose onComplete is skipped. */
  onCompleteExcludeKinds?: ResultKind[];
  /** The work's own log threshold for its events. */
  logLevel?: LogLevel;
  /** The enqueuing span's propagation fields (such as `traceparent`), written by the telemetry. */
  trace?: Record<string, string>;
  /** The schedule tick the work was enqueued for (a cron schedule's work only). */
  tick?: { schedule: string; at: number };
}

const NONE: WorkMeta = Object.freeze({});

/** The last meta text parsed: the rows of one batch share it, and a claim often takes them together. */
let last: { text: string; meta: WorkMeta } | null = null;

/** The meta as JSON text, or null when it holds nothing. */
export function encodeMeta(meta: WorkMeta): string | null {
  const out: WorkMeta = {};
  if (meta.onCompleteExcludeKinds?.length) out.onCompleteExcludeKinds = meta.onCompleteExcludeKinds;
  if (meta.logLevel !== undefined) out.logLevel = meta.logLevel;
  if (meta.trace !== undefined && Object.keys(meta.trace).length > 0) out.trace = meta.trace;
  if (meta.tick !== undefined) out.tick = meta.tick;
  return Object.keys(out).length ? JSON.stringify(out) : null;
}

/**
 * The meta of a row. Read, never trusted: a field that does not have its shape (a row
 * written by hand, a newer release) is left out rather than failing the work.
 */
export function readMeta(row: Pick<WorkFields, "meta">): WorkMeta {
  const text = row.meta;
  if (text === null) return NONE;
  if (last?.text === text) return last.meta;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    raw = null;
  }
  const meta: WorkMeta = {};
  if (typeof raw === "object" && raw !== null) {
    const r = raw as Record<string, unknown>;
    if (Array.isArray(r.onCompleteExcludeKinds)) meta.onCompleteExcludeKinds = r.onCompleteExcludeKinds.filter(isResultKind);
    if (typeof r.logLevel === "string" && (LOG_LEVELS as readonly string[]).includes(r.logLevel)) meta.logLevel = r.logLevel as LogLevel;
    if (typeof r.trace === "object" && r.trace !== null && !Array.isArray(r.trace)) meta.trace = stringFields(r.trace);
    const tick = r.tick as { schedule?: unknown; at?: unknown } | null | undefined;
    if (typeof tick === "object" && tick !== null && typeof tick.schedule === "string" && Number.isSafeInteger(tick.at)) {
      meta.tick = { schedule: tick.schedule, at: tick.at as number };
    }
  }
  Object.freeze(meta);
  last = { text, meta };
  return meta;
}

/** True when the row has an onComplete that runs for a result of `kind`. */
export function runsOnComplete(row: Pick<WorkFields, "onComplete" | "meta">, kind: ResultKind): boolean {
  if (row.onComplete === null) return false;
  return !(readMeta(row).onCompleteExcludeKinds?.includes(kind) ?? false);
}

/** The row's own log threshold, if it has one. */
export function workLogLevel(row: Pick<WorkFields, "meta">): LogLevel | undefined {
  return row.meta === null ? undefined : readMeta(row).logLevel;
}

function isResultKind(v: unknown): v is ResultKind {
  return v === "success" || v === "failed" || v === "canceled";
}

function stringFields(o: object): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(o)) if (typeof v === "string") out[k] = v;
  return out;
}

/** The schedule tick a row was enqueued for: `scheduledAt` and `scheduleId` of its handler's context. */
export function scheduleTick(row: Pick<WorkFields, "meta">): { scheduledAt: number | null; scheduleId: string | null } {
  const tick = row.meta === null ? undefined : readMeta(row).tick;
  return tick ? { scheduledAt: tick.at, scheduleId: tick.schedule } : NO_TICK;
}

const NO_TICK = Object.freeze({ scheduledAt: null, scheduleId: null });

/** `meta` with the schedule tick it was enqueued for. */
export function withTick(meta: string | null, schedule: string, at: number): string | null {
  return encodeMeta({ ...readMeta({ meta }), tick: { schedule, at } });
}

/** `meta` with the enqueue's trace carrier added (or replaced). */
export function withTrace(meta: string | null, trace: Record<string, string>): string | null {
  return encodeMeta({ ...readMeta({ meta }), trace });
}
