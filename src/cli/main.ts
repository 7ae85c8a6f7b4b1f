#!/usr/bin/env node
/**
 * The `workpool` bin: runs the command line and exits with its code (see exit-codes.ts).
 */
import { run } from "./program.js";

process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
});
