/**
 * `workpool`: a durable work pool for TypeScript on SQL. Import a store from
 * `workpool/sqlite` (or `workpool/postgres`) and pass it to `new Workpool(store)`.
 */
export { Workpool } from "./workpool.js";
export type { ActionEnqueueOptions, CancelAllOptions, EnqueueOptions, StopOptions } from "./workpool.js";
export type { RunOnceResult } from "./internal/worker.js";
export type { CronSpec, ScheduleInfo, ScheduleOptions } from "./cron/schedules.js";
export { NonRetryableError, WorkError, DEFAULT_RETRY_BEHAVIOR } from "./retry.js";
export { InvalidArgumentError, UnknownWorkError } from "./errors.js";
export { ManualClock, systemClock } from "./clock.js";
export type { Clock, TimerHandle } from "./clock.js";
export { LOG_LEVELS } from "./events.js";
export { messageFirstLogger } from "./log-adapters.js";
export type { MessageFirstLogger } from "./log-adapters.js";
export type { AttemptEnd, AttemptTrace, AttemptTraceInfo, EnqueueTrace, EnqueueTraceInfo, Telemetry, TraceCarrier } from "./telemetry.js";
export type {
  WorkflowAdvanceEnd,
  WorkflowAdvanceTrace,
  WorkflowAdvanceTraceInfo,
  WorkflowStartTrace,
  WorkflowStepTraceInfo,
  WorkflowTelemetry,
  WorkflowTraceInfo,
} from "./telemetry.js";
export type {
  CompletedEvent,
  CompletionStatus,
  EnqueuedEvent,
  Logger,
  LogFields,
  LogLevel,
  ReportEvent,
  StartedEvent,
  WorkpoolEventName,
  WorkpoolEvents,
} from "./events.js";
export type { WorkflowFinishedEvent, WorkflowReplayedEvent, WorkflowStartedEvent, WorkflowStepEvent } from "./events.js";
export type {
  ActionCtx,
  ActionFn,
  ActionHandle,
  MutationCtx,
  MutationFn,
  MutationHandle,
  OnCompleteCtx,
  OnCompleteFn,
  OnCompleteHandle,
  ArgsOf,
  ResultOf,
} from "./handlers.js";
export type { BatchActionCtx, BatchActionFn, BatchActionOptions, BatchItem } from "./internal/batch-types.js";
export { MAX_PARALLELISM } from "./options.js";
export type { ConfigureOptions, WorkpoolOptions } from "./options.js";
export { MAX_PAYLOAD_BYTES } from "./json.js";
export { toWorkId } from "./ids.js";
export type {
  Json,
  JsonValue,
  OnCompleteArgs,
  OnCompleteStatus,
  RateLimit,
  RetryBehavior,
  RunResult,
  ResultKind,
  Status,
  WorkId,
  WorkKind,
  WorkState,
} from "./types.js";
export type { Store } from "./driver/driver.js";
export { transactionExecutor, splitPlaceholders, TX_EXECUTOR } from "./driver/tx-executor.js";
export type { ExecutorRow, ExecutorRun, ExecutorStatement, TransactionExecutor } from "./driver/tx-executor.js";
export { ActionRetrier } from "./retrier/action-retrier.js";
export { RunNotCompletedError, UnknownRunError } from "./retrier/errors.js";
export type { ActionRetrierOptions } from "./retrier/options.js";
export type {
  RetrierActionCtx,
  RetrierActionFn,
  RetrierActionHandle,
  RetrierOnCompleteArgs,
  RetrierOnCompleteCtx,
  RetrierOnCompleteFn,
  RetrierOnCompleteHandle,
  RetrierRunResult,
  RunId,
  RunBackoffOptions,
  RunOptions,
  RunStatus,
  ScheduledRunOptions,
} from "./retrier/types.js";
export type { Progress } from "./internal/progress.js";
export type { AttemptLog, AttemptLogLevel, AttemptLogLine } from "./internal/attempt-logs.js";
export type { ProgressEvent } from "./events.js";
