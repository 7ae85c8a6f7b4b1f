/**
 * Every command of the `workpool` CLI, in the order `--help` lists them. A command is a
 * module exporting a function that registers it (and its options) on the program with
 * the shared {@link Cli}. To add one, write its module and list its register function
 * here.
 */
import type { Command } from "commander";
import type { Cli } from "../cli.js";
import { registerCancels, registerRetryAndPurge } from "./actions.js";
import { registerDashboard } from "./dashboard.js";
import { registerLimits } from "./limits.js";
import { registerPools } from "./pools.js";
import { registerRetryAll } from "./retry-all.js";
import { registerStore } from "./store.js";
import { registerWork } from "./work.js";
import { registerWorkflows } from "./workflows.js";

/** Registers one or more commands on `program`. */
export type RegisterCommands = (program: Command, cli: Cli) => void;

/** The commands, by module. */
export const COMMANDS: readonly RegisterCommands[] = [
  registerPools,
  registerWork,
  registerCancels,
  registerRetryAndPurge,
  registerRetryAll,
  registerLimits,
  registerStore,
  registerDashboard,
  registerWorkflows,
];
