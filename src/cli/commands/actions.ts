/**
 * The commands that change work: `cancel <id…>`, `cancel-all <pool>`, `retry <id…>` and
 * `purge <pool>`. The destructive ones ask first on a terminal unless `--yes`.
 */
import type { Command } from "commander";
import type { WorkpoolAdmin } from "../../admin/types.js";
import { InvalidArgumentError, UnknownWorkError } from "../../errors.js";
import { isWorkId } from "../../ids.js";
import type { Cli } from "../cli.js";
import { CliError, EXIT, type ExitCode } from "../exit-codes.js";
import { parseBefore } from "../format.js";
import { t, type Shown } from "../terminal-text.js";

/** Asks on a terminal (unless `yes`); a "no" ends the command with the "declined" exit. */
async function confirmOrStop(cli: Cli, yes: boolean | undefined, question: Shown): Promise<void> {
  if (yes) return;
  if (!(await cli.out.confirm(question))) throw new CliError("nothing done", EXIT.declined);
}

/** A pool the store has, or a "not found" error. */
async function knownPool(admin: WorkpoolAdmin, pool: string): Promise<void> {
  if (!(await admin.pools()).some((p) => p.name === pool)) throw new CliError(`no pool named "${pool}" in this store`, EXIT.notFound);
}

/**
 * Refuses ids that are not in work-id format before anything is done: a typo in the
 * middle of a list would otherwise stop the command after it acted on the ids before it.
 */
function checkIds(ids: readonly string[]): void {
  const bad = ids.filter((id) => !isWorkId(id));
  if (bad.length) {
    const list = bad.map((id) => JSON.stringify(id)).join(", ");
    throw new CliError(`<id>: not a work id (26 characters, as enqueue returns it): ${list}; nothing was done`, EXIT.usage);
  }
}

/** What was done to one id: `failed` is the exit code it calls for when it was not done. */
type Outcome = { id: string; outcome: string; newId?: string; error?: string; failed?: ExitCode };

/** Prints per-id outcomes (a line each, or JSON). */
function report(cli: Cli, json: boolean | undefined, outcomes: readonly Outcome[]): void {
  if (json) return cli.out.json(outcomes.map(({ failed: _, ...o }) => o));
  for (const o of outcomes) {
    const text = o.newId ? `retried as ${o.newId}` : o.error ? `${o.outcome}: ${o.error}` : o.outcome;
    cli.out.line(t`${o.id}   ${o.failed ? cli.out.color.red(text) : text}`);
  }
}

/**
 * Acts on each id in turn and prints each one's outcome, also those done before an
 * unexpected error (which then ends the command). The exit code is the first failed
 * id's (see docs/operations.md); the others were done.
 */
async function eachId(cli: Cli, ids: readonly string[], json: boolean | undefined, act: (id: string) => Promise<Outcome>): Promise<void> {
  const outcomes: Outcome[] = [];
  try {
    for (const id of ids) {
      const outcome = await act(id);
      if (outcome.failed) cli.fail(outcome.failed);
      outcomes.push(outcome);
    }
  } finally {
    report(cli, json, outcomes);
  }
}

async function cancelOne(admin: WorkpoolAdmin, id: string): Promise<Outcome> {
  const before = await admin.get(id);
  if (!before) return { id, outcome: "not found", failed: EXIT.notFound };
  if (await admin.cancel(id)) return { id, outcome: before.state === "running" ? "cancel requested (running)" : "canceled" };
  return { id, outcome: before.state === "finished" ? "already finished" : "already being canceled", failed: EXIT.notApplicable };
}

async function retryOne(admin: WorkpoolAdmin, id: string): Promise<Outcome> {
  try {
    return { id, outcome: "retried", newId: await admin.retry(id) };
  } catch (e) {
    if (e instanceof UnknownWorkError) return { id, outcome: "not found", failed: EXIT.notFound };
    if (!(e instanceof InvalidArgumentError)) throw e;
    return { id, outcome: "not retried", error: e.message.replace(/^workpool: id: /, ""), failed: EXIT.notApplicable };
  }
}

/** Registers `cancel` and `cancel-all`. */
export function registerCancels(program: Command, cli: Cli): void {
  program
    .command("cancel")
    .description("cancel work: pending work at once, running work through its worker")
    .argument("<id...>", "work ids")
    .option("-y, --yes", "do not ask for confirmation")
    .option("--json", "print JSON")
    .action(async (ids: string[], o: { yes?: boolean; json?: boolean }, command: Command) => {
      checkIds(ids);
      await cli.withStore(command, async (admin) => {
        await confirmOrStop(cli, o.yes, t`Cancel ${ids.length} work?`);
        await eachId(cli, ids, o.json, (id) => cancelOne(admin, id));
      });
    });

  program
    .command("cancel-all")
    .description("cancel a pool's unfinished work (pending and running)")
    .argument("<pool>", "the pool")
    .option("--before <when>", "only work enqueued before this: an age (30m, 7d), a date, or epoch ms")
    .option("--handler <name>", "only work of this handler")
    .option("--key <key>", "only work of this key")
    .option("-y, --yes", "do not ask for confirmation")
    .option("--json", "print JSON")
    .action(
      async (pool: string, o: { before?: string; handler?: string; key?: string; yes?: boolean; json?: boolean }, command: Command) => {
        const filter: { before?: number; handler?: string; key?: string } = {};
        if (o.before !== undefined) filter.before = parseBefore("--before", o.before, Date.now());
        if (o.handler !== undefined) filter.handler = o.handler;
        if (o.key !== undefined) filter.key = o.key;
        await cli.withStore(command, async (admin) => {
          await knownPool(admin, pool);
          await confirmOrStop(
            cli,
            o.yes,
            t`Cancel the unfinished work of pool "${pool}"${o.handler ? t` (handler ${o.handler})` : ""}${o.key ? t` (key ${o.key})` : ""}?`,
          );
          const canceled = await admin.cancelAll(pool, filter);
          if (o.json) cli.out.json({ pool, canceled });
          else cli.out.line(t`canceled ${canceled} work in pool "${pool}"`);
        });
      },
    );
}

/** Registers `retry` and `purge`. */
export function registerRetryAndPurge(program: Command, cli: Cli): void {
  program
    .command("retry")
    .description("run finished work that failed or was canceled again, as new work")
    .argument("<id...>", "work ids")
    .option("--json", "print JSON")
    .action(async (ids: string[], o: { json?: boolean }, command: Command) => {
      checkIds(ids);
      await cli.withStore(command, async (admin) => {
        await eachId(cli, ids, o.json, (id) => retryOne(admin, id));
      });
    });

  program
    .command("purge")
    .description("delete a pool's finished work, or cancel and delete its pending work")
    .argument("<pool>", "the pool")
    .option("--finished", "delete finished work (not work whose onComplete has yet to run)")
    .option("--pending", "cancel pending work (onComplete still runs, once) and delete it")
    .option("--before <when>", "only work finished (or, with --pending, enqueued) before this: an age (7d), a date, or epoch ms")
    .option("-y, --yes", "do not ask for confirmation")
    .option("--json", "print JSON")
    .action(
      async (
        pool: string,
        o: { finished?: boolean; pending?: boolean; before?: string; yes?: boolean; json?: boolean },
        command: Command,
      ) => {
        if (o.finished === o.pending) throw new CliError("purge: pass exactly one of --finished or --pending", EXIT.usage);
        const state = o.finished ? "finished" : "pending";
        const options: { state: "finished" | "pending"; before?: number } = { state };
        if (o.before !== undefined) options.before = parseBefore("--before", o.before, Date.now());
        await cli.withStore(command, async (admin) => {
          await knownPool(admin, pool);
          await confirmOrStop(cli, o.yes, t`Purge the ${state} work of pool "${pool}"${o.before ? t` (before ${o.before})` : ""}?`);
          const purged = await admin.purge(pool, options);
          if (o.json) cli.out.json({ pool, state, purged });
          else cli.out.line(t`purged ${purged} ${state} work from pool "${pool}"`);
        });
      },
    );
}
