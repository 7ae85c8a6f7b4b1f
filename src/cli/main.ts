#!/usr/bin/env node
/**
 * The `workpool` bin: runs the command line and exits with its code (see exit-codes.ts).
 */
import { run } from "./program.js";

// A reader that stops early (`workpool ls | head`) ends the command quietly, as it ends other tools.
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code !== "EPIPE") throw e;
  process.exit(0);
});

process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
});
