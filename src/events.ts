/**
 * Log levels, the structured events a pool emits, and the logger that writes them.
 * Each event is logged as an object (filtered by `logLevel`) and delivered to listeners
 * registered with `pool.on(...)` (never filtered).
 */
import type { WorkflowFinishedEvent, WorkflowReplayedEvent, WorkflowStartedEvent, WorkflowStepEvent } from "./workflow-events.js";
import { errorText } from "./error-text.js";
import type { JsonValue, WorkId, WorkKind } from "./types.js";

/** Log levels, from most to least verbose. */
export const LOG_LEVELS = ["DEBUG", "TRACE", "INFO", "REPORT", "WARN", "ERROR"] as const;

/** A log level: a message is written when its level is at or above the pool's. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Where log records go, called pino's way: `logger.info(fields, message)`. `fields` is a
 * plain object: an event's own fields (`event`, `pool`, `workId`...), or `pool` and, for
 * a failure, `err` (the Error). pino and `console` fit; for a logger that takes the
 * message first (winston), wrap it with `messageFirstLogger`.
 */
export interface Logger {
  debug(fields: LogFields, message: string): void;
  info(fields: LogFields, message: string): void;
  warn(fields: LogFields, message: string): void;
  error(fields: LogFields, message: string): void;
}

/** The structured part of a log record. */
export interface LogFields {
  /** The pool the record is about. */
  pool?: string;
  /** The error, for records about a failure. */
  err?: unknown;
  /** The event's name, for event records; the event's other fields come with it. */
  event?: WorkpoolEventName;
  [field: string]: unknown;
}

/** Work was committed to the store (or, with `tx`, written into the caller's transaction). */
export interface EnqueuedEvent {
  event: "enqueued";
  pool: string;
  workId: WorkId;
  fnName: string;
  kind: WorkKind;
  /** When it may start, epoch ms. */
  runAt: number;
  enqueuedAt: number;
  /** Its priority, when not 0. */
  priority?: number;
  /** Its key, when it has one. */
  key?: string;
  /** Present when the enqueue replaced pending work with the same uniqueKey (`workId` is that work's). */
  replaced?: true;
  /** The work's own `logLevel`, when it has one: this event is logged against it instead of the pool's. */
  logLevel?: LogLevel;
}

/** An attempt was claimed and started by this process. */
export interface StartedEvent {
  event: "started";
  pool: string;
  workId: WorkId;
  fnName: string;
  /** 1-based attempt number. */
  attempt: number;
  startedAt: number;
  /** How late the start was: startedAt - the time it was due. */
  startLagMs: number;
  /** Its priority, when not 0. */
  priority?: number;
  /** Its key, when it has one. */
  key?: string;
  /** The work's own `logLevel`, when it has one: this event is logged against it instead of the pool's. */
  logLevel?: LogLevel;
}

/** How an attempt ended: `retrying` means another attempt is scheduled. */
export type CompletionStatus = "success" | "failed" | "canceled" | "retrying";

/** An attempt ended (or pending work was canceled). */
export interface CompletedEvent {
  event: "completed";
  pool: string;
  workId: WorkId;
  fnName: string;
  status: CompletionStatus;
  /** Attempts made so far, including this one. */
  attempts: number;
  completedAt: number;
  /** completedAt - enqueuedAt. */
  lagSinceEnqueuedMs: number;
  /** How long the attempt ran: completedAt - its start. Absent for work canceled before it started. */
  durationMs?: number;
  /** The error message, for `failed` and `retrying`. */
  error?: string;
  /** The work's onComplete handler, when it has one that runs for this outcome. */
  onComplete?: string;
  /** The work's own `logLevel`, when it has one: this event is logged against it instead of the pool's. */
  logLevel?: LogLevel;
}

/**
 * A running action's progress was stored (`ctx.reportProgress`): coalesced, so at most a
 * few per second per attempt, the last value always before the attempt's outcome.
 */
export interface ProgressEvent {
  event: "progress";
  pool: string;
  workId: WorkId;
  fnName: string;
  /** 1-based attempt number. */
  attempt: number;
  /** The last value reported before the write. */
  progress: number | { [key: string]: JsonValue };
  /** The work's own `logLevel`, when it has one: this event is logged against it instead of the pool's. */
  logLevel?: LogLevel;
}

/** Periodic summary, written by the pool's maintenance leader every `reportIntervalMs`. */
export interface ReportEvent {
  event: "report";
  pool: string;
  /** Attempts that ended in the interval (includes retries and failures). */
  completed: number;
  /** Work that succeeded (after any retries). */
  succeeded: number;
  /** Work that failed for good. */
  failed: number;
  /** Attempts that failed and were scheduled again. */
  retries: number;
  /** Work canceled. */
  canceled: number;
  /** Attempts running now, across all processes. */
  running: number;
  /** Pending work that is due now and waiting for a slot. */
  backlog: number;
  /**
   * Due work a rate limit holds back now (part of `backlog`): all of it while the pool's
   * `rateLimit` window is full, else the due work of keys at their `keyRateLimit`.
   */
  rateLimited: number;
  /** (failed + retries) / completed. */
  failureRate: number;
  /** failed / (completed - retries). */
  permanentFailureRate: number;
  /** Length of the interval this report covers, ms. */
  intervalMs: number;
}

export type { WorkflowFinishedEvent, WorkflowReplayedEvent, WorkflowStartedEvent, WorkflowStepEvent } from "./workflow-events.js";

/** Every event by name. */
export interface WorkpoolEvents {
  enqueued: EnqueuedEvent;
  started: StartedEvent;
  completed: CompletedEvent;
  report: ReportEvent;
  progress: ProgressEvent;
  workflowStarted: WorkflowStartedEvent;
  workflowFinished: WorkflowFinishedEvent;
  workflowStep: WorkflowStepEvent;
  workflowReplayed: WorkflowReplayedEvent;
}

/** Names of the events a pool emits. */
export type WorkpoolEventName = keyof WorkpoolEvents;

/** Every event name, in the order the docs list them. */
export const EVENT_NAMES: readonly WorkpoolEventName[] = [
  "enqueued",
  "started",
  "completed",
  "report",
  "progress",
  "workflowStarted",
  "workflowFinished",
  "workflowStep",
  "workflowReplayed",
];

/** Compares levels: true when `level` should be written under threshold `min`. */
export function levelEnabled(level: LogLevel, min: LogLevel): boolean {
  return LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(min);
}

/**
 * Level each event is logged at: a permanent failure is worth a warning, unless the work
 * has an onComplete, which receives the failure: the app handles it, as expected.
 */
export function eventLevel(e: WorkpoolEvents[WorkpoolEventName]): LogLevel {
  if (e.event === "report") return "REPORT";
  if (e.event === "progress") return "TRACE";
  if (e.event === "completed" && e.status === "failed" && e.onComplete === undefined) return "WARN";
  if (e.event === "workflowStep" || e.event === "workflowReplayed") return "DEBUG";
  return "INFO";
}

/** The highest level {@link eventLevel} gives each kind of event. */
const HIGHEST_EVENT_LEVEL: Record<WorkpoolEventName, LogLevel> = {
  enqueued: "INFO",
  started: "INFO",
  completed: "WARN",
  report: "REPORT",
  progress: "TRACE",
  workflowStarted: "INFO",
  workflowFinished: "INFO",
  workflowStep: "DEBUG",
  workflowReplayed: "DEBUG",
};

/** The logger method each level is written with. */
const SINK_METHOD: Record<LogLevel, keyof Logger> = {
  DEBUG: "debug",
  TRACE: "debug",
  INFO: "info",
  REPORT: "info",
  WARN: "warn",
  ERROR: "error",
};

/** Writes level-filtered log lines; the level can change at run time (configure). */
export class PoolLogger {
  /** Set once the sink has thrown: it is reported once only. */
  private failed = false;

  constructor(
    private readonly sink: Logger,
    public level: LogLevel,
    private readonly pool?: string,
  ) {}

  /**
   * Writes a record at `level` if enabled under `threshold` (default: the pool's level). A
   * logger that throws never fails the operation that logs: its error is reported once,
   * as a process warning.
   */
  write(level: LogLevel, fields: LogFields, message: string, threshold: LogLevel = this.level): void {
    if (!levelEnabled(level, threshold)) return;
    try {
      this.sink[SINK_METHOD[level]](fields, message);
    } catch (e) {
      if (this.failed) return;
      this.failed = true;
      process.emitWarning(
        `workpool: the logger's ${SINK_METHOD[level]}() threw (${errorText(e)}); later errors of this logger are ignored`,
        { code: "WORKPOOL_LOGGER_THREW" },
      );
    }
  }

  /** The fields of a plain record: the pool and, if given, the error. */
  private fields(err: unknown): LogFields {
    const fields: LogFields = {};
    if (this.pool !== undefined) fields.pool = this.pool;
    if (err !== undefined) fields.err = err;
    return fields;
  }

  /** Writes `message` (and `err`, when given) at DEBUG. */
  debug(message: string, err?: unknown): void {
    if (levelEnabled("DEBUG", this.level)) this.write("DEBUG", this.fields(err), message);
  }
  /** Writes `message` (and `err`, when given) at WARN. */
  warn(message: string, err?: unknown): void {
    if (levelEnabled("WARN", this.level)) this.write("WARN", this.fields(err), message);
  }
  /** Writes `message` (and `err`, when given) at ERROR. */
  error(message: string, err?: unknown): void {
    if (levelEnabled("ERROR", this.level)) this.write("ERROR", this.fields(err), message);
  }
}

type Listener<K extends WorkpoolEventName> = (event: WorkpoolEvents[K]) => void;

/** Typed event fan-out: logs each event as JSON and hands it to listeners. */
export class EventHub {
  private readonly listeners: { [K in WorkpoolEventName]: Set<Listener<K>> } = {
    enqueued: new Set(),
    started: new Set(),
    completed: new Set(),
    report: new Set(),
    progress: new Set(),
    workflowStarted: new Set(),
    workflowFinished: new Set(),
    workflowStep: new Set(),
    workflowReplayed: new Set(),
  };

  constructor(private readonly logger: PoolLogger) {}

  /** Adds a listener; returns a function that removes it. */
  on<K extends WorkpoolEventName>(name: K, listener: Listener<K>): () => void {
    this.listeners[name].add(listener);
    return () => this.off(name, listener);
  }

  /** Removes a listener. */
  off<K extends WorkpoolEventName>(name: K, listener: Listener<K>): void {
    this.listeners[name].delete(listener);
  }

  /**
   * Whether an event `name` may be written or heard, for work whose own log level is
   * `workLevel` (if it has one): hot paths skip building events nobody will see.
   */
  wants(name: WorkpoolEventName, workLevel?: LogLevel): boolean {
    return this.listeners[name].size > 0 || levelEnabled(HIGHEST_EVENT_LEVEL[name], workLevel ?? this.logger.level);
  }

  /** Logs and delivers one event. A throwing listener is logged, never propagated. */
  emit<K extends WorkpoolEventName>(event: WorkpoolEvents[K] & { event: K }): void {
    const level = eventLevel(event);
    const threshold = ("logLevel" in event ? event.logLevel : undefined) ?? this.logger.level;
    // A copy, so a logger that adds fields (pino's mixins, winston's formats) leaves the listeners' event alone.
    if (levelEnabled(level, threshold)) this.logger.write(level, { ...event }, `workpool: ${event.event}`, threshold);
    const listeners = this.listeners[event.event] as Set<Listener<K>>;
    if (listeners.size === 0) return;
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (e) {
        this.logger.error(`workpool: a "${event.event}" listener threw`, e);
      }
    }
  }
}
