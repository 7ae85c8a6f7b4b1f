/**
 * How the admin API presents stored rows: pool summaries, list items and one work's
 * detail, with its attempt history.
 */
import type { PoolRead, WorkDetailRow, WorkListRow } from "../driver/admin-ops.js";
import { DEFAULT_MAX_PARALLELISM } from "../options.js";
import type { JsonValue, RunResult, WorkId } from "../types.js";
import type { AttemptOutputRecord, AttemptRecord, PoolSummary, WorkDetail, WorkSummary } from "./types.js";
import type { AttemptOutputRow } from "../driver/attempt-output-ops.js";
import type { AttemptLogLine } from "../internal/attempt-logs.js";
import type { Progress } from "../internal/progress.js";
import { readMeta } from "../internal/work-meta.js";
import { startedSince, stateCounts } from "./pool-counts.js";

/** Attempts kept per work. */
const HISTORY = 10;

/** A pool as the store read it at `now`. */
export function toPoolSummary(r: PoolRead, now: number): PoolSummary {
  return {
    name: r.name,
    maxParallelism: r.maxParallelism ?? DEFAULT_MAX_PARALLELISM,
    pausedFrom: r.pausedFrom,
    keyParallelism: r.keyParallelism,
    rateLimit: r.rateLimit,
    keyRateLimit: r.keyRateLimit,
    counts: stateCounts(r),
    oldestPendingAgeMs: r.oldestDueRunAt === null ? null : Math.max(0, now - r.oldestDueRunAt),
    lastMinute: { started: startedSince(r), finished: r.finishedSince, meanWaitMs: meanWait(r) },
  };
}

/** The mean wait to start of the work a pool read counted as started and waited, ms; null if none. */
export function meanWait(r: Pick<PoolRead, "waitedCount" | "waitedSumMs">): number | null {
  return r.waitedCount > 0 ? Math.max(0, Math.round(r.waitedSumMs / r.waitedCount)) : null;
}

/** A listed row. */
export function toWorkSummary(r: WorkListRow): WorkSummary {
  return {
    id: r.id as WorkId,
    pool: r.pool,
    kind: r.kind,
    handler: r.fnName,
    name: r.name,
    state: r.state,
    resultKind: r.resultKind,
    attempts: r.attempt,
    priority: r.priority,
    key: r.key,
    runAt: r.runAt,
    enqueuedAt: r.enqueuedAt,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
  };
}

/**
 * The attempts of a row, oldest first: the stored records of attempts that threw or were
 * lost, plus the last attempt of finished work when it has none (it succeeded, was
 * canceled while it ran, or its record was left out).
 */
export function attemptHistory(row: WorkDetailRow, result: RunResult | null): AttemptRecord[] {
  const history = row.attemptLog === null ? [] : (JSON.parse(row.attemptLog) as AttemptRecord[]);
  const last = history[history.length - 1];
  if (result && row.attempt > 0 && row.finishedAt !== null && last?.attempt !== row.attempt) {
    const record: AttemptRecord = { attempt: row.attempt, startedAt: row.startedAt, endedAt: row.finishedAt, outcome: result.kind };
    if (result.kind === "failed") record.error = { message: result.error };
    history.push(record);
  }
  return history.slice(-HISTORY);
}

/** The stored outputs of a work's attempts, oldest first. */
export function toAttemptOutput(rows: readonly AttemptOutputRow[]): AttemptOutputRecord[] {
  return rows.map((r) => ({
    attempt: r.attempt,
    progress: r.progress === null ? null : (JSON.parse(r.progress) as Progress),
    progressAt: r.progressAt,
    logs: r.logs === null ? [] : (JSON.parse(r.logs) as AttemptLogLine[]),
    droppedLines: r.logsDropped,
    updatedAt: r.updatedAt,
  }));
}

/** Everything about one stored row, with the stored outputs of its attempts. */
export function toWorkDetail(row: WorkDetailRow, outputs: readonly AttemptOutputRow[] = []): WorkDetail {
  const attemptOutput = toAttemptOutput(outputs);
  const result = row.result === null ? null : (JSON.parse(row.result) as RunResult<JsonValue | undefined>);
  const meta = readMeta(row);
  return {
    ...toWorkSummary({ ...row, resultKind: result?.kind ?? null }),
    args: JSON.parse(row.args) as JsonValue,
    context: row.context === null ? undefined : (JSON.parse(row.context) as JsonValue),
    retry: row.retry,
    timeoutMs: row.timeoutMs,
    result,
    onComplete:
      row.onComplete === null
        ? null
        : {
            handler: row.onComplete,
            // A row finishes with its delivery "pending" (or "none": skipped for its result kind); before that, it has not started.
            state: row.ocState !== "none" ? row.ocState : row.state === "finished" ? "skipped" : "pending",
            failedAttempts: row.ocAttempts,
            error: row.ocError,
          },
    onCompleteExcludeKinds: [...(meta.onCompleteExcludeKinds ?? [])],
    logLevel: meta.logLevel ?? null,
    traceparent: meta.trace?.traceparent ?? null,
    attemptHistory: attemptHistory(row, result),
    retriedAs: row.retriedAs as WorkId | null,
    progress: attemptOutput.find((o) => o.attempt === row.attempt)?.progress ?? null,
    attemptOutput,
  };
}
