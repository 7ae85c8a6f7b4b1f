/**
 * The commands that change a pool's limit for every process: `pause`, `resume` and
 * `set-parallelism`.
 */
import type { Command } from "commander";
import type { PoolSummary, WorkpoolAdmin } from "../../admin/types.js";
import { MAX_PARALLELISM } from "../../options.js";
import type { Cli } from "../cli.js";
import { CliError, EXIT } from "../exit-codes.js";
import { parseCount } from "../format.js";
import { t, type Shown } from "../terminal-text.js";

async function poolNamed(admin: WorkpoolAdmin, pool: string): Promise<PoolSummary> {
  const found = (await admin.pools()).find((p) => p.name === pool);
  if (!found) throw new CliError(`no pool named "${pool}" in this store`, EXIT.notFound);
  return found;
}

/** Registers `pause`, `resume` and `set-parallelism`. */
export function registerLimits(program: Command, cli: Cli): void {
  const print = (json: boolean | undefined, value: object, text: Shown): void => (json ? cli.out.json(value) : cli.out.line(text));

  program
    .command("pause")
    .description("stop a pool from starting attempts (limit 0), remembering its limit")
    .argument("<pool>", "the pool")
    .option("--json", "print JSON")
    .action(async (pool: string, o: { json?: boolean }, command: Command) => {
      await cli.withStore(command, async (admin) => {
        const before = await poolNamed(admin, pool);
        if (before.pausedFrom !== null) {
          return print(o.json, { pool, paused: true, pausedFrom: before.pausedFrom }, t`pool "${pool}" is already paused`);
        }
        await admin.pause(pool);
        print(
          o.json,
          { pool, paused: true, pausedFrom: before.maxParallelism },
          t`paused pool "${pool}" (resume restores ${before.maxParallelism})`,
        );
      });
    });

  program
    .command("resume")
    .description("restore the limit a paused pool had")
    .argument("<pool>", "the pool")
    .option("--json", "print JSON")
    .action(async (pool: string, o: { json?: boolean }, command: Command) => {
      await cli.withStore(command, async (admin) => {
        const before = await poolNamed(admin, pool);
        if (before.pausedFrom === null) {
          cli.fail(EXIT.notApplicable);
          return print(o.json, { pool, paused: false, maxParallelism: before.maxParallelism }, t`pool "${pool}" is not paused`);
        }
        await admin.resume(pool);
        print(o.json, { pool, paused: false, maxParallelism: before.pausedFrom }, t`resumed pool "${pool}" at ${before.pausedFrom}`);
      });
    });

  program
    .command("set-parallelism")
    .description("set a pool's maxParallelism for every process (ends a pause; 0 pauses without remembering)")
    .argument("<pool>", "the pool")
    .argument("<n>", `0 to ${MAX_PARALLELISM}`)
    .option("--json", "print JSON")
    .action(async (pool: string, n: string, o: { json?: boolean }, command: Command) => {
      const limit = parseCount("<n>", n, 0, MAX_PARALLELISM);
      await cli.withStore(command, async (admin) => {
        await poolNamed(admin, pool);
        await admin.setParallelism(pool, limit);
        print(o.json, { pool, maxParallelism: limit }, t`set pool "${pool}" to maxParallelism ${limit}`);
      });
    });
}
