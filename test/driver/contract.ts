/**
 * The driver contract: the `Driver` interface exercised directly, without a Workpool, on
 * every store, one file per noun in contract/. The conformance suite checks behaviour
 * through the public API; this suite pins down what the core relies on each driver to do
 * (see src/driver/). A capability only one driver has is skipped on the other, with the
 * reason in the test's name.
 */
import { describe } from "vitest";
import type { StoreHarness } from "../conformance/harness.js";
import { defineAdminReadContract } from "./contract/admin-reads.js";
import { defineClaimContract } from "./contract/claim.js";
import { defineCompleteContract } from "./contract/complete.js";
import { defineHeartbeatContract } from "./contract/heartbeat.js";
import { defineInsertContract } from "./contract/insert.js";
import { defineLeadershipContract } from "./contract/leadership.js";
import { definePoolContract } from "./contract/pools.js";
import { defineRateLimitContract } from "./contract/rate-limits.js";
import { defineRedriveContract } from "./contract/redrive.js";
import { defineRetentionContract } from "./contract/retention.js";
import { defineScheduleContract } from "./contract/schedules.js";

/** Registers the contract suite for one store. */
export function defineDriverContract<Tx>(harness: StoreHarness<Tx>): void {
  describe(`driver contract: ${harness.name}`, () => {
    defineInsertContract(harness);
    defineClaimContract(harness);
    defineCompleteContract(harness);
    defineHeartbeatContract(harness);
    defineRetentionContract(harness);
    defineLeadershipContract(harness);
    definePoolContract(harness);
    defineRateLimitContract(harness);
    defineScheduleContract(harness);
    defineAdminReadContract(harness);
    defineRedriveContract(harness);
  });
}
