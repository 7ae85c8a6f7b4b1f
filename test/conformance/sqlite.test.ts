/** The conformance suite on SQLite (see harness-sqlite.ts). */
import { sqliteHarness } from "./harness-sqlite.js";
import { defineConformanceSuite } from "./suite.js";

defineConformanceSuite(sqliteHarness);
