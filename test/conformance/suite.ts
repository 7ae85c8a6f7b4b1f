/**
 * The driver conformance suite: every store runs these same tests. Each topic lives in
 * its own file; a driver's *.test.ts calls defineConformanceSuite with its harness.
 */
import { describe } from "vitest";
import type { StoreHarness } from "./harness.js";
import { defineEnqueueRunTests } from "./enqueue-run.js";
import { defineParallelismTests } from "./parallelism.js";
import { defineRetryTests } from "./retry.js";
import { defineOnCompleteTests } from "./on-complete.js";
import { defineCancelTests } from "./cancel.js";
import { defineRecoveryTests } from "./recovery.js";
import { defineStopTests } from "./stop.js";
import { defineValidationTests } from "./validation.js";
import { defineEventsRetentionTests } from "./events-retention.js";
import { defineBadInputTests } from "./bad-input.js";
import { defineJamProofTests } from "./jam-proof.js";
import { definePriorityTests } from "./priority.js";
import { defineKeyTests } from "./keys.js";
import { defineFairTurnTests } from "./fair-turns.js";
import { defineKeyProcessTests } from "./keys-processes.js";
import { defineUniqueKeyTests } from "./unique.js";
import { defineKeysInputTests } from "./keys-input.js";
import { defineAdminReadTests } from "./admin-reads.js";
import { defineAdminActionTests } from "./admin-actions.js";
import { defineAdminPagingTests } from "./admin-paging.js";
import { defineAdminValidationTests } from "./admin-validation.js";
import { defineAdminMetricsTests } from "./admin-metrics.js";
import { defineDashboardTests } from "./dashboard.js";
import { defineErrorDataTests } from "./error-data.js";
import { defineLoggingTests } from "./logging.js";
import { defineRateLimitTests } from "./rate-limits.js";
import { defineScheduleTests } from "./schedules.js";
import { defineWorkOptionTests } from "./work-options.js";
import { defineTelemetryTests } from "./telemetry.js";
import { defineAttemptFencingTests } from "./attempt-fencing.js";
import { defineCloseTests } from "./close.js";
import { defineWorkflowTests } from "./workflows.js";
import { defineWorkflowEventCancelTests } from "./workflow-events-cancel.js";
import { defineWorkflowDeterminismTests } from "./workflow-determinism.js";
import { defineHeldConnectionTests } from "./held-connection.js";
import { defineWorkflowRetentionTests } from "./workflow-retention.js";
import { defineBatchActionTests } from "./batch-actions.js";

/** Registers the whole suite for one store. */
export function defineConformanceSuite<Tx>(harness: StoreHarness<Tx>): void {
  describe(`conformance: ${harness.name}`, () => {
    defineEnqueueRunTests(harness);
    defineParallelismTests(harness);
    defineRetryTests(harness);
    defineOnCompleteTests(harness);
    defineCancelTests(harness);
    defineRecoveryTests(harness);
    defineStopTests(harness);
    defineValidationTests(harness);
    defineEventsRetentionTests(harness);
    defineBadInputTests(harness);
    defineJamProofTests(harness);
    definePriorityTests(harness);
    defineKeyTests(harness);
    defineFairTurnTests(harness);
    defineKeyProcessTests(harness);
    defineUniqueKeyTests(harness);
    defineKeysInputTests(harness);
    defineAdminReadTests(harness);
    defineAdminActionTests(harness);
    defineAdminPagingTests(harness);
    defineAdminValidationTests(harness);
    defineAdminMetricsTests(harness);
    defineDashboardTests(harness);
    defineErrorDataTests(harness);
    defineLoggingTests(harness);
    defineRateLimitTests(harness);
    defineScheduleTests(harness);
    defineWorkOptionTests(harness);
    defineTelemetryTests(harness);
    defineAttemptFencingTests(harness);
    defineCloseTests(harness);
    defineWorkflowTests(harness);
    defineWorkflowEventCancelTests(harness);
    defineWorkflowDeterminismTests(harness);
    defineWorkflowRetentionTests(harness);
    defineHeldConnectionTests(harness);
    defineBatchActionTests(harness);
  });
}
