/**
 * `workpool/admin`: the operator's API over a store (pools, listing, one work's detail,
 * cancel, retry (one, or all matching), purge, pause and resume, limits) and its
 * Prometheus metrics. Works with no pool or handler defined in the process.
 */
export { workpoolAdmin } from "./admin.js";
export { METRIC_NAMES } from "./metrics.js";
export type {
  AdminStateFilter,
  AttemptOutputRecord,
  AttemptRecord,
  ListOptions,
  ListPage,
  ObservablePool,
  PoolSummary,
  RateLimit,
  ScheduleSummary,
  WorkDetail,
  WorkpoolAdmin,
  WorkpoolAdminOptions,
  WorkSummary,
} from "./types.js";
export type {
  WorkflowCounts,
  WorkflowEventInfo,
  WorkflowListOptions,
  WorkflowListPage,
  WorkflowRunDetail,
  WorkflowRunOptions,
  WorkflowStateFilter,
  WorkflowStepDetail,
  WorkflowSummary,
} from "./workflow-types.js";
export type { RetriedWork, RetryAllFilter, RetryAllOptions, RetryAllPreview, RetryAllResult } from "./retry-all-types.js";
