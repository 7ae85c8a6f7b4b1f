/** The driver contract on SQLite. */
import { sqliteHarness } from "../conformance/harness-sqlite.js";
import { defineDriverContract } from "./contract.js";

defineDriverContract(sqliteHarness);
