/**
 * `workpool retry-all <pool> --state failed|canceled`: retries every matching finished work
 * of a pool as new work (admin.retryAll). It counts first and asks on a terminal; off a
 * terminal it needs `--yes`, because the count it would confirm is not seen by anyone.
 * `--dry-run` lists what would be retried and changes nothing.
 */
import { Option, type Command } from "commander";
import type { RetryAllFilter } from "../../admin/retry-all-types.js";
import type { WorkpoolAdmin } from "../../admin/types.js";
import type { Cli } from "../cli.js";
import { CliError, EXIT } from "../exit-codes.js";
import { parseBefore } from "../format.js";
import { joinShown, t, type Shown } from "../terminal-text.js";

/** Ids (or id pairs) printed one per line before the rest is left to --json. */
const SHOWN_AT_MOST = 20;

interface RetryAllFlags {
  state: RetryAllFilter["state"];
  handler?: string;
  key?: string;
  finishedAfter?: string;
  finishedBefore?: string;
  dryRun?: boolean;
  yes?: boolean;
  json?: boolean;
}

/** The admin's filter from the flags; times as `--before` takes them (an age, a date, or epoch ms). */
function filterOf(o: RetryAllFlags, now: number): RetryAllFilter {
  const filter: RetryAllFilter = { state: o.state };
  if (o.handler !== undefined) filter.handler = o.handler;
  if (o.key !== undefined) filter.key = o.key;
  if (o.finishedAfter !== undefined) filter.finishedAfter = parseBefore("--finished-after", o.finishedAfter, now);
  if (o.finishedBefore !== undefined) filter.finishedBefore = parseBefore("--finished-before", o.finishedBefore, now);
  return filter;
}

/** "failed work of pool "mail" (handler send, key k)". */
function described(pool: string, o: RetryAllFlags): Shown {
  const only = [o.handler === undefined ? null : t`handler ${o.handler}`, o.key === undefined ? null : t`key ${o.key}`].filter(
    (x): x is Shown => x !== null,
  );
  return t`${o.state} work of pool "${pool}"${only.length ? t` (${joinShown(only, ", ")})` : ""}`;
}

/** `head`, then the first lines of a long list and how many more there are, in one write. */
function printSome(cli: Cli, head: Shown, lines: readonly Shown[]): void {
  const more = lines.length > SHOWN_AT_MOST ? [t`… and ${lines.length - SHOWN_AT_MOST} more (--json lists them all)`] : [];
  cli.out.line(joinShown([head, ...lines.slice(0, SHOWN_AT_MOST), ...more], "\n"));
}

/** Asks before retrying `count` work: on a terminal a question, elsewhere a refusal unless --yes. */
async function confirmCount(cli: Cli, count: number, what: Shown): Promise<void> {
  if (!cli.out.interactive) {
    throw new CliError(`retry-all would retry ${count} work; pass --yes to retry them (or --dry-run to list them)`, EXIT.usage);
  }
  if (!(await cli.out.confirm(t`Retry ${count} ${what}?`))) throw new CliError("nothing done", EXIT.declined);
}

async function retryAll(cli: Cli, admin: WorkpoolAdmin, pool: string, filter: RetryAllFilter, o: RetryAllFlags): Promise<void> {
  if (!(await admin.pools()).some((p) => p.name === pool)) throw new CliError(`no pool named "${pool}" in this store`, EXIT.notFound);
  const what = described(pool, o);
  if (o.dryRun || !o.yes) {
    const preview = await admin.retryAll(pool, filter, { dryRun: true });
    if (o.dryRun) {
      if (o.json) return cli.out.json({ pool, ...preview });
      return printSome(
        cli,
        t`would retry ${preview.count} ${what}`,
        preview.ids.map((id) => t`${id}`),
      );
    }
    if (preview.count === 0) {
      if (o.json) return cli.out.json({ pool, dryRun: false, count: 0, retried: [] });
      return cli.out.line(t`nothing to retry: no ${what} that was not retried already`);
    }
    await confirmCount(cli, preview.count, what);
  }
  const result = await admin.retryAll(pool, filter);
  if (o.json) return cli.out.json({ pool, ...result });
  printSome(
    cli,
    t`retried ${result.count} ${what}`,
    result.retried.map((r) => t`${r.id}   retried as ${r.newId}`),
  );
}

/** Registers `retry-all`. */
export function registerRetryAll(program: Command, cli: Cli): void {
  program
    .command("retry-all")
    .description("run a pool's failed (or canceled) work again as new work, each work once")
    .argument("<pool>", "the pool")
    .addOption(new Option("--state <state>", "how the work finished").choices(["failed", "canceled"]).makeOptionMandatory())
    .option("--handler <name>", "only work of this handler")
    .option("--key <key>", "only work of this key")
    .option("--finished-after <when>", "only work finished at or after this: an age (30m, 7d), a date, or epoch ms")
    .option("--finished-before <when>", "only work finished before this: an age (30m, 7d), a date, or epoch ms")
    .option("--dry-run", "list the work that would be retried; change nothing")
    .option("-y, --yes", "do not ask for confirmation (needed off a terminal)")
    .option("--json", "print JSON")
    .action(async (pool: string, o: RetryAllFlags, command: Command) => {
      const filter = filterOf(o, Date.now());
      await cli.withStore(command, (admin) => retryAll(cli, admin, pool, filter, o));
    });
}
