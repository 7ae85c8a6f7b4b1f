/** The driver contract on PostgreSQL. */
import { postgresHarness } from "../conformance/harness-postgres.js";
import { useSharedServer } from "../postgres/helpers.js";
import { defineDriverContract } from "./contract.js";

useSharedServer();

defineDriverContract(postgresHarness);
