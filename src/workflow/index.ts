/**
 * `workpool/workflow`: durable workflows on a pool. See docs/workflows.md.
 */
export { WorkflowManager } from "./manager.js";
export type { WorkflowManagerOptions } from "./manager.js";
export { WorkflowCanceledError, StepFailedError, UnknownWorkflowError } from "./errors.js";
export type {
  ActionStepOptions,
  BlockedInfo,
  DefineWorkflowOptions,
  EventResult,
  ForkOptions,
  MapFailureMode,
  MapItemResult,
  MapOptions,
  RestartOptions,
  SendEventOptions,
  StartOptions,
  StepCallInfo,
  WorkflowFn,
  WorkflowHandle,
  WorkflowOnCompleteArgs,
  WorkflowResult,
  WorkflowStatus,
  WorkflowStep,
  WorkflowStepInfo,
  WorkflowVersionInfo,
  WorkStepOptions,
} from "./types.js";
