/**
 * Cron schedules as the application sees them: schedule()'s options, what schedules()
 * returns, and the checks that turn schedule() input into a stored schedule before
 * anything is written.
 */
import { checkName, checkOptionKeys, describeValue, optionKeys } from "../checks.js";
import type { ActionOnlyOptions } from "../call-options.js";
import type { CatchUp, ScheduleRow, ScheduleWrite } from "../driver/schedule-ops.js";
import { InvalidArgumentError } from "../errors.js";
import type { LogLevel } from "../events.js";
import type { OnCompleteHandle } from "../handlers.js";
import { prepareEnqueue, type EnqueueContext } from "../internal/enqueue-input.js";
import { decodeJson } from "../json.js";
import type { ResultKind, RetryBehavior, WorkId, WorkKind } from "../types.js";
import { checkSpec, nextTick } from "./spec.js";
import { storeWorkOptions } from "./stored.js";

export type { CronSpec } from "./spec.js";

/** Longest schedule id, in characters. */
export const MAX_SCHEDULE_ID_LENGTH = 200;

/** Options of schedule(): the enqueue options each tick's work gets, plus catchUp. */
export interface ScheduleOptions<C = unknown, R = unknown, P extends string = string> {
  /**
   * After every worker of the pool was down over one or more ticks: `"latest"` (default)
   * enqueues the most recent missed tick once; `"none"` skips them (a tick more than 10 s
   * late counts as missed).
   */
  catchUp?: "latest" | "none";
  /** Actions: true, false, or a retry behaviour (as enqueueAction). */
  retry?: boolean | RetryBehavior;
  /** Actions: abort and fail an attempt after this many ms. */
  timeoutMs?: number;
  /** Claim order among due work (-1000..1000, lower first). */
  priority?: number;
  /** The key whose attempts keyParallelism and keyRateLimit limit. */
  key?: string;
  /** Mutation run exactly once when each tick's work finishes. */
  onComplete?: OnCompleteHandle<C, R, P>;
  /** JSON passed to onComplete as `context`. */
  context?: C;
  /** Result kinds for which onComplete is skipped (one or two of the three). */
  onCompleteExcludeKinds?: readonly ResultKind[];
  /** Display name of each tick's work. */
  name?: string;
  /** The log threshold of each tick's work's events, in place of the pool's. */
  logLevel?: LogLevel;
}

/** One schedule of the pool, as schedules() returns it. */
export interface ScheduleInfo {
  id: string;
  spec: { cron: string; timezone: string };
  catchUp: "latest" | "none";
  /** The handler each tick runs, and its kind. */
  handler: string;
  kind: WorkKind;
  /** The args each tick's work gets. */
  args: unknown;
  /** When the next tick is due, epoch ms (null: the expression has no later date). */
  nextRunAt: number | null;
  /** The last tick enqueued, epoch ms, or null. */
  lastTick: number | null;
  /** The work of the last tick enqueued, or null. */
  lastWorkId: WorkId | null;
  createdAt: number;
  updatedAt: number;
}

/** Checks a schedule id. */
export function checkScheduleId(value: unknown): string {
  return checkName("scheduleId", value, MAX_SCHEDULE_ID_LENGTH);
}

/** Checks `catchUp`. */
function checkCatchUp(value: unknown): CatchUp {
  if (value === undefined) return "latest";
  if (value !== "latest" && value !== "none") {
    throw new InvalidArgumentError("catchUp", `must be "latest" or "none", got ${describeValue(value)}`);
  }
  return value;
}

// The keys both kinds take; an action's schedule takes the action-only ones besides.
const SHARED_SCHEDULE_KEYS = {
  catchUp: true,
  priority: true,
  key: true,
  onComplete: true,
  context: true,
  onCompleteExcludeKinds: true,
  name: true,
  logLevel: true,
} as const satisfies Partial<Record<keyof ScheduleOptions, true>>;
const MUTATION_SCHEDULE_KEYS = optionKeys<Omit<ScheduleOptions, keyof ActionOnlyOptions>>()(SHARED_SCHEDULE_KEYS);
const ACTION_SCHEDULE_KEYS = optionKeys<ScheduleOptions>()({ ...SHARED_SCHEDULE_KEYS, retry: true, timeoutMs: true });

/** Checks schedule() input and builds the stored schedule; throws before anything is written. */
export function prepareSchedule<Tx>(
  ctx: EnqueueContext<Tx>,
  scheduleId: unknown,
  spec: unknown,
  handle: unknown,
  args: unknown,
  options: unknown,
): ScheduleWrite {
  const id = checkScheduleId(scheduleId);
  const { cron, timezone } = checkSpec(spec);
  const kind = (handle as { kind?: unknown } | null)?.kind === "mutation" ? "mutation" : "action";
  const allowed = kind === "action" ? ACTION_SCHEDULE_KEYS : MUTATION_SCHEDULE_KEYS;
  const o =
    options === undefined
      ? {}
      : checkOptionKeys("options", options, allowed, `schedule() of ${kind === "action" ? "an action" : "a mutation"}`);
  const catchUp = checkCatchUp(o.catchUp);
  const enqueueOptions = Object.fromEntries(Object.entries(o).filter(([k]) => k !== "catchUp"));
  // The enqueue checks: handle, args and options as an enqueue of this work would be checked.
  const row = prepareEnqueue(ctx, { kind, handle, argsList: [args], options: enqueueOptions, argsField: "args" }).rows[0]!;
  const now = ctx.options.clock.now();
  const nextRunAt = nextTick(cron, timezone, now);
  if (nextRunAt === null) throw new InvalidArgumentError("spec.cron", "has no date after now");
  const stored = storeWorkOptions(row);
  return { id, cron, timezone, catchUp, kind, fnName: row.fnName, args: row.args, options: stored, nextRunAt, now };
}

/** A stored schedule as schedules() returns it. */
export function toScheduleInfo(s: ScheduleRow): ScheduleInfo {
  return {
    id: s.id,
    spec: { cron: s.cron, timezone: s.timezone },
    catchUp: s.catchUp,
    handler: s.fnName,
    kind: s.kind,
    args: decodeJson(s.args),
    nextRunAt: s.nextRunAt >= Number.MAX_SAFE_INTEGER ? null : s.nextRunAt,
    lastTick: s.lastTick,
    lastWorkId: s.lastWorkId as WorkId | null,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}
