/**
 * The ActionRetrier suite: every store runs these same tests through its factory. Time is
 * a ManualClock and jitter is fixed, so every backoff is asserted to the millisecond;
 * work is stepped with runOnce() and running attempts are awaited through events. Each
 * topic lives in its own file.
 */
import { describe } from "vitest";
import type { RetrierStoreFactory } from "./helpers.js";
import { defineRunTests } from "./runs.js";
import { defineOnCompleteTests } from "./on-complete.js";
import { defineCancelTests } from "./cancel.js";
import { defineCleanupTests } from "./cleanup.js";
import { defineSchedulingTests } from "./scheduling.js";
import { defineLostWorkerTests } from "./lost-workers.js";
import { defineOptionTests } from "./options.js";

/** Registers the whole ActionRetrier suite for one store. */
export function defineActionRetrierSuite<Tx>(factory: RetrierStoreFactory<Tx>): void {
  describe(`ActionRetrier: ${factory.name}`, () => {
    defineRunTests(factory);
    defineOnCompleteTests(factory);
    defineCancelTests(factory);
    defineCleanupTests(factory);
    defineSchedulingTests(factory);
    defineLostWorkerTests(factory);
    defineOptionTests(factory);
  });
}
