/** The conformance suite on PostgreSQL (see harness-postgres.ts). */
import { useSharedServer } from "../postgres/helpers.js";
import { postgresHarness } from "./harness-postgres.js";
import { defineConformanceSuite } from "./suite.js";

// Keeps the chaos test (which restarts the server) from running at the same time.
useSharedServer();

defineConformanceSuite(postgresHarness);
