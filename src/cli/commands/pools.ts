/**
 * `workpool pools` (one line per pool) and `workpool stats [pool] [--watch]` (each pool in
 * full, refreshed with --watch).
 */
import type { Command } from "commander";
import type { PoolSummary, RateLimit, WorkpoolAdmin } from "../../admin/types.js";
import type { Cli } from "../cli.js";
import { CliError, EXIT } from "../exit-codes.js";
import { block, duration, parseCount, table } from "../format.js";
import { joinShown, t, type Colors, type Printable, type Shown } from "../terminal-text.js";

/** "10", or "paused (10)" while paused. */
function limit(p: PoolSummary, c: Colors): Printable {
  return p.pausedFrom === null ? p.maxParallelism : c.yellow(`paused (${p.pausedFrom})`);
}

function age(ms: number | null): string {
  return ms === null ? "-" : duration(ms);
}

/** "100/1 min", or `none` when unset. */
function rate(r: RateLimit | null, none: string): string {
  return r === null ? none : `${r.limit}/${duration(r.periodMs)}`;
}

/** The pools as a table. */
export function poolsTable(pools: readonly PoolSummary[], c: Colors): Shown {
  return table(
    [
      "pool",
      "limit",
      "key limit",
      "rate",
      "key rate",
      "pending",
      "retrying",
      "running",
      "success",
      "failed",
      "canceled",
      "oldest due",
      "started/min",
      "finished/min",
    ],
    pools.map((p) => [
      p.name,
      limit(p, c),
      p.keyParallelism ?? "-",
      rate(p.rateLimit, "-"),
      rate(p.keyRateLimit, "-"),
      p.counts.pending,
      p.counts.retrying,
      p.counts.running,
      p.counts.success,
      p.counts.failed ? c.red(p.counts.failed) : "0",
      p.counts.canceled,
      age(p.oldestPendingAgeMs),
      p.lastMinute.started,
      p.lastMinute.finished,
    ]),
  );
}

/** One pool in full. */
function poolBlock(p: PoolSummary, c: Colors): Shown {
  const { counts } = p;
  return block([
    ["Pool", c.bold(p.name)],
    ["Limit", p.pausedFrom === null ? p.maxParallelism : c.yellow(`paused (resume restores ${p.pausedFrom})`)],
    ["Key limit", p.keyParallelism ?? "none"],
    ["Rate limit", rate(p.rateLimit, "none")],
    ["Key rate limit", rate(p.keyRateLimit, "none")],
    ["Pending", `${counts.pending}${p.oldestPendingAgeMs === null ? "" : `, oldest due for ${duration(p.oldestPendingAgeMs)}`}`],
    ["Retrying", counts.retrying],
    ["Running", counts.running],
    [
      "Finished",
      t`${counts.success} success, ${counts.failed ? c.red(`${counts.failed} failed`) : "0 failed"}, ${counts.canceled} canceled`,
    ],
    [
      "Last minute",
      `${p.lastMinute.started} started, ${p.lastMinute.finished} finished${p.lastMinute.meanWaitMs === null ? "" : `, mean wait ${duration(p.lastMinute.meanWaitMs)}`}`,
    ],
  ]);
}

/** Prints the pools (or `pool`) in full; a pool the store does not have is "not found". */
async function printStats(cli: Cli, admin: WorkpoolAdmin, pool: string | undefined, json: boolean): Promise<void> {
  const pools = (await admin.pools()).filter((p) => pool === undefined || p.name === pool);
  if (pool !== undefined && pools.length === 0) throw new CliError(`no pool named "${pool}" in this store`, EXIT.notFound);
  if (json) cli.out.json(pool === undefined ? pools : pools[0]);
  else if (pools.length === 0) cli.out.line(t`no pools in this store`);
  else
    cli.out.line(
      joinShown(
        pools.map((p) => poolBlock(p, cli.out.color)),
        "\n\n",
      ),
    );
}

/** Runs `frame` every `seconds` until SIGINT or SIGTERM; clears the screen between frames on a terminal. */
async function watch(cli: Cli, seconds: number, frame: () => Promise<void>): Promise<void> {
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    for (;;) {
      cli.out.clearScreen();
      cli.out.line(cli.out.color.dim(`${new Date().toISOString()}  (every ${seconds} s; Ctrl-C to stop)`));
      await frame();
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), seconds * 1000)));
      const again = await Promise.race([tick, stopped.then(() => false)]);
      clearTimeout(timer);
      if (!again) return;
    }
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}

/** Registers `pools` and `stats`. */
export function registerPools(program: Command, cli: Cli): void {
  program
    .command("pools")
    .description("list every pool of the store with its limits and counts")
    .option("--json", "print JSON (admin.pools())")
    .action(async (options: { json?: boolean }, command: Command) => {
      await cli.withStore(command, async (admin) => {
        const pools = await admin.pools();
        if (options.json) cli.out.json(pools);
        else cli.out.line(pools.length ? poolsTable(pools, cli.out.color) : t`no pools in this store`);
      });
    });

  program
    .command("stats")
    .description("show each pool (or one) in full: limits, counts, oldest due work, last minute")
    .argument("[pool]", "only this pool")
    .option("--watch", "refresh until interrupted")
    .option("--interval <seconds>", "refresh interval with --watch", "2")
    .option("--json", "print JSON (a PoolSummary, or all of them)")
    .action(async (pool: string | undefined, options: { watch?: boolean; interval: string; json?: boolean }, command: Command) => {
      const seconds = parseCount("--interval", options.interval, 1, 3600);
      await cli.withStore(command, async (admin) => {
        const once = (): Promise<void> => printStats(cli, admin, pool, options.json === true);
        if (options.watch) await watch(cli, seconds, once);
        else await once();
      });
    });
}
