/**
 * `workpool ls <pool>` (a page of a pool's work, newest first) and `workpool show <id>`
 * (one work in full, with its attempts).
 */
import type { Command } from "commander";
import type { AdminStateFilter, ListOptions, WorkDetail, WorkSummary } from "../../admin/types.js";
import { ADMIN_STATE_FILTERS } from "../../admin/validate.js";
import type { Progress } from "../../internal/progress.js";
import type { Cli } from "../cli.js";
import { CliError, EXIT } from "../exit-codes.js";
import { ago, block, duration, parseCount, table, when } from "../format.js";
import { joinShown, jsonText, multiline, t, type Colors, type Printable, type Shown } from "../terminal-text.js";
import { repeatCommand } from "../repeat.js";

/** The state a person reads: pending, retrying, running, or how finished work ended. */
function stateOf(w: WorkSummary, c: Colors): Printable {
  if (w.state === "finished") {
    const kind = w.resultKind ?? "finished";
    return kind === "failed" ? c.red(kind) : kind === "success" ? c.green(kind) : c.dim(kind);
  }
  if (w.state === "pending") return w.attempts > 0 ? c.yellow("retrying") : "pending";
  return c.cyan("running");
}

function workTable(items: readonly WorkSummary[], c: Colors, now: number): Shown {
  return table(
    ["id", "handler", "name", "key", "priority", "state", "attempts", "enqueued", "started", "finished"],
    items.map((w) => [
      w.id,
      w.handler,
      w.name ?? "-",
      w.key ?? "-",
      w.priority,
      stateOf(w, c),
      w.attempts,
      ago(w.enqueuedAt, now),
      ago(w.startedAt, now),
      ago(w.finishedAt, now),
    ]),
  );
}

function compactJson(value: unknown): Printable {
  return value === undefined ? "-" : jsonText(value, 0);
}

function resultText(w: WorkDetail, c: Colors): Printable {
  if (!w.result) return "-";
  if (w.result.kind === "failed") return c.red(`failed: ${w.result.error}`);
  if (w.result.kind === "canceled") return "canceled";
  return t`success: ${compactJson(w.result.returnValue)}`;
}

/** The work a failed or canceled work was retried as: "-" until it is; nothing for other work. */
function retriedAs(w: WorkDetail): [string, Printable][] {
  const retryable = w.resultKind === "failed" || w.resultKind === "canceled";
  return retryable || w.retriedAs !== null ? [["Retried as", w.retriedAs ?? "-"]] : [];
}

/** A reported progress: a number as a percentage, an object as compact JSON. */
function progressText(p: Progress): Printable {
  return typeof p === "number" ? `${p}%` : jsonText(p, 0);
}

/**
 * Each attempt's log lines, oldest first, one per output line: time, level, message and
 * fields, every control character escaped (a message's line breaks too, so a line cannot
 * pass for another).
 */
function logBlocks(w: WorkDetail, c: Colors): Shown[] {
  return w.attemptOutput
    .filter((o) => o.logs.length > 0 || o.droppedLines > 0)
    .map((o) => {
      const lines: Printable[] = [c.bold(`attempt ${o.attempt} logs`)];
      if (o.droppedLines > 0) lines.push(c.dim(`(${o.droppedLines} earlier lines dropped)`));
      for (const l of o.logs) {
        const level = l.level === "error" ? c.red("error") : l.level === "warn" ? c.yellow("warn ") : "info ";
        const fields = l.fields === undefined ? "" : t` ${jsonText(l.fields, 0)}`;
        lines.push(t`${new Date(l.at).toISOString()} ${level} ${l.message}${fields}${l.cut ? c.dim(" (cut)") : ""}`);
      }
      return joinShown(lines, "\n");
    });
}

/** One work in full, then its attempts (with each failure's stack when `stacks`, and their log lines when `logs`). */
function detail(w: WorkDetail, c: Colors, now: number, stacks: boolean, logs: boolean): Shown {
  const pairs: [string, Printable][] = [
    ["ID", w.id],
    ["Pool", w.pool],
    ["Handler", `${w.handler} (${w.kind})`],
    ["Name", w.name ?? "-"],
    ["Key", w.key ?? "-"],
    ["Priority", w.priority],
    ["State", w.state === "finished" ? t`finished, ${stateOf(w, c)}` : stateOf(w, c)],
    ["Attempts", w.attempts],
    ["Enqueued", when(w.enqueuedAt, now)],
    ["Run at", when(w.runAt, now)],
    ["Started", when(w.startedAt, now)],
    ["Finished", when(w.finishedAt, now)],
    ["Retry", w.retry ? `maxAttempts ${w.retry.maxAttempts}, initialBackoffMs ${w.retry.initialBackoffMs}, base ${w.retry.base}` : "none"],
    ["Timeout", w.timeoutMs === null ? "-" : duration(w.timeoutMs)],
    ["Args", compactJson(w.args)],
    ["Context", compactJson(w.context)],
    ["Result", resultText(w, c)],
  ];
  if (w.progress !== null) pairs.push(["Progress", progressText(w.progress)]);
  if (w.result?.kind === "failed" && w.result.errorData !== undefined) pairs.push(["Error data", compactJson(w.result.errorData)]);
  pairs.push(...retriedAs(w), [
    "onComplete",
    w.onComplete
      ? `${w.onComplete.handler}: ${w.onComplete.state}${w.onComplete.failedAttempts ? `, ${w.onComplete.failedAttempts} failed tries` : ""}${w.onComplete.error ? ` (${w.onComplete.error})` : ""}`
      : "-",
  ]);
  if (w.onCompleteExcludeKinds.length) pairs.push(["onComplete skipped for", w.onCompleteExcludeKinds.join(", ")]);
  if (w.logLevel !== null) pairs.push(["Log level", w.logLevel]);
  if (w.traceparent !== null) pairs.push(["Trace", w.traceparent]);
  const parts = [block(pairs)];
  if (w.attemptHistory.length) {
    const rows = w.attemptHistory.map((a) => [
      a.attempt,
      a.outcome === "failed" || a.outcome === "lost" ? c.red(a.outcome) : a.outcome,
      ago(a.startedAt, now),
      a.startedAt === null ? "-" : duration(a.endedAt - a.startedAt),
      a.error ? `${a.error.name ? `${a.error.name}: ` : ""}${a.error.message.split("\n")[0]}` : "",
    ]);
    parts.push(table(["attempt", "outcome", "started", "took", "error"], rows));
    if (stacks) {
      // A stack's line breaks are its layout; every other control character is escaped.
      for (const a of w.attemptHistory) if (a.error?.stack) parts.push(t`${c.bold(`attempt ${a.attempt}`)}\n${multiline(a.error.stack)}`);
    }
  }
  if (logs) {
    const blocks = logBlocks(w, c);
    parts.push(...(blocks.length ? blocks : [t`no log lines`]));
  }
  return joinShown(parts, "\n\n");
}

/** Registers `ls` and `show`. */
export function registerWork(program: Command, cli: Cli): void {
  program
    .command("ls")
    .description("list a pool's work, newest first, a page at a time")
    .argument("<pool>", "the pool")
    .option("--state <state>", `only work in this state: ${ADMIN_STATE_FILTERS.join(", ")}`)
    .option("--handler <name>", "only work of this handler")
    .option("--key <key>", "only work of this key")
    .option("--search <text>", "a work id, or a handler or display name prefix")
    .option("--limit <n>", "items per page, 1 to 500", "50")
    .option("--cursor <cursor>", "the next page, as printed under the previous one")
    .option("--json", "print JSON ({ items, cursor })")
    .action(
      async (
        pool: string,
        o: { state?: string; handler?: string; key?: string; search?: string; limit: string; cursor?: string; json?: boolean },
        command: Command,
      ) => {
        if (o.state !== undefined && !(ADMIN_STATE_FILTERS as readonly string[]).includes(o.state)) {
          throw new CliError(`--state: expected one of ${ADMIN_STATE_FILTERS.join(", ")}, got "${o.state}"`, EXIT.usage);
        }
        const options: ListOptions = { limit: parseCount("--limit", o.limit, 1, 500) };
        if (o.state !== undefined) options.state = o.state as AdminStateFilter;
        if (o.handler !== undefined) options.handler = o.handler;
        if (o.key !== undefined) options.key = o.key;
        if (o.search !== undefined) options.search = o.search;
        if (o.cursor !== undefined) options.cursor = o.cursor;
        await cli.withStore(command, async (admin) => {
          const page = await admin.list(pool, options);
          if (!page.items.length && !o.cursor && !(await admin.pools()).some((p) => p.name === pool)) {
            throw new CliError(`no pool named "${pool}" in this store`, EXIT.notFound);
          }
          if (o.json) return cli.out.json(page);
          if (!page.items.length) return cli.out.line(o.cursor ? t`no more work` : t`no work in pool "${pool}" matches`);
          cli.out.line(workTable(page.items, cli.out.color, Date.now()));
          if (page.cursor) cli.out.line(t`\n${cli.out.color.dim(`more: ${repeatCommand(command, [pool], { cursor: page.cursor })}`)}`);
        });
      },
    );

  program
    .command("show")
    .description("show one work in full, with the error of each failed attempt")
    .argument("<id>", "the work id")
    .option("--stack", "also print the stack of each failed attempt")
    .option("--logs", "also print each attempt's log lines (ctx.log)")
    .option("--json", "print JSON (admin.get())")
    .action(async (id: string, o: { stack?: boolean; logs?: boolean; json?: boolean }, command: Command) => {
      await cli.withStore(command, async (admin) => {
        const work = await admin.get(id);
        if (!work) throw new CliError(`no work with id ${id} in this store (it never existed, or retention deleted it)`, EXIT.notFound);
        if (o.json) cli.out.json(work);
        else cli.out.line(detail(work, cli.out.color, Date.now(), o.stack === true, o.logs === true));
      });
    });
}
