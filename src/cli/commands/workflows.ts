/**
 * `workpool workflows …`: list runs (`ls`), show one (`show`), and act on one (`cancel`,
 * `restart`, `fork`, `skip`, `send-event`) through the admin API, and list versions (`versions`); a started worker of the
 * run's pool carries the run on. Flags are checked before the store is opened.
 */
import type { Command } from "commander";
import type { WorkpoolAdmin } from "../../admin/types.js";
import type { WorkflowListOptions, WorkflowStateFilter } from "../../admin/workflow-types.js";
import { InvalidArgumentError } from "../../errors.js";
import { UnknownWorkflowError } from "../../workflow/errors.js";
import { checkEventName, checkWorkflowId } from "../../workflow/validate.js";
import type { Cli } from "../cli.js";
import { CliError, EXIT } from "../exit-codes.js";
import { parseBefore, parseCount } from "../format.js";
import { repeatCommand } from "../repeat.js";
import { t } from "../terminal-text.js";
import { blockedText, runDetail, runsTable } from "./workflow-views.js";
import { registerVersions } from "./workflow-versions.js";

/** The states `ls --state` takes. */
const STATES: readonly WorkflowStateFilter[] = [
  "running",
  "blocked",
  "success",
  "failed",
  "canceled",
  "canceling",
  "finished",
  "unfinished",
];

/** Highest entry number a flag may name (the largest maxSteps). */
const MAX_ENTRY = 10_000_000;

/** `check()`'s value, or its InvalidArgumentError as a usage error naming `arg`. */
function usage<T>(arg: string, check: () => T): T {
  try {
    return check();
  } catch (e) {
    if (!(e instanceof InvalidArgumentError)) throw e;
    throw new CliError(`${arg}: ${e.message.replace(/^workpool: [^:]+: /, "")}; nothing was done`, EXIT.usage);
  }
}

/** A run id as the API takes it, or a usage error. */
function runId(id: string, arg = "<id>"): string {
  return usage(arg, () => checkWorkflowId("id", id));
}

/**
 * Runs an action of the admin API on run `id`: an unknown run is "not found" (3), a run
 * in a state the action does not apply to is "not applicable" (4), a bad option value
 * the store's check found (an entry past the journal's end) is a usage error (2).
 */
async function act<T>(id: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (e) {
    if (e instanceof UnknownWorkflowError) throw new CliError(`no workflow run with id ${id} in this store`, EXIT.notFound);
    if (e instanceof InvalidArgumentError && e.field === "id")
      throw new CliError(e.message.replace(/^workpool: id: /, ""), EXIT.notApplicable);
    if (e instanceof InvalidArgumentError) {
      const flag =
        { "options.from": "--from", "options.workflowId": "--workflow-id", name: "<name>", payload: "--payload" }[e.field] ?? e.field;
      throw new CliError(`${flag}: ${e.message.replace(/^workpool: [^:]+: /, "")}`, EXIT.usage);
    }
    throw e;
  }
}

/** Asks on a terminal (unless `yes`); a "no" ends the command with the "declined" exit. */
async function confirmOrStop(cli: Cli, yes: boolean | undefined, question: ReturnType<typeof t>): Promise<void> {
  if (!yes && !(await cli.out.confirm(question))) throw new CliError("nothing done", EXIT.declined);
}

/** `ls`'s flags as list options; a bad one is a usage error. */
function listOptions(o: Record<string, string | undefined>, now: number): WorkflowListOptions {
  if (o.state !== undefined && !(STATES as readonly string[]).includes(o.state))
    throw new CliError(`--state: expected one of ${STATES.join(", ")}, got "${o.state}"`, EXIT.usage);
  const options: WorkflowListOptions = { limit: parseCount("--limit", o.limit ?? "50", 1, 500) };
  if (o.pool !== undefined) options.pool = o.pool;
  if (o.name !== undefined) options.name = o.name;
  if (o.state !== undefined) options.state = o.state as WorkflowStateFilter;
  if (o.version !== undefined) options.version = o.version;
  if (o.parent !== undefined) options.parentId = runId(o.parent, "--parent");
  if (o.createdAfter !== undefined) options.createdAfter = parseBefore("--created-after", o.createdAfter, now);
  if (o.createdBefore !== undefined) options.createdBefore = parseBefore("--created-before", o.createdBefore, now);
  if (o.cursor !== undefined) options.cursor = o.cursor;
  return options;
}

/** A usage error for options the admin API refused before reading (a malformed cursor, a pool name). */
async function checked<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (e) {
    if (e instanceof InvalidArgumentError) throw new CliError(`--${e.field}: ${e.message.replace(/^workpool: [^:]+: /, "")}`, EXIT.usage);
    throw e;
  }
}

/** Registers `ls` and `show` on the `workflows` group. */
function registerReads(group: Command, cli: Cli): void {
  group
    .command("ls")
    .description("list workflow runs, newest first, a page at a time")
    .option("--pool <pool>", "only runs of this pool")
    .option("--name <name>", "only runs of this workflow")
    .option("--state <state>", `only runs in this state: ${STATES.join(", ")}`)
    .option("--version <version>", "only runs started by this version of the code")
    .option("--parent <id>", "only child runs of this run")
    .option("--created-after <when>", "only runs created at or after this: an age (30m, 7d), a date, or epoch ms")
    .option("--created-before <when>", "only runs created before this: an age (30m, 7d), a date, or epoch ms")
    .option("--limit <n>", "runs per page, 1 to 500", "50")
    .option("--cursor <cursor>", "the next page, as printed under the previous one")
    .option("--json", "print JSON ({ items, cursor })")
    .action(async (o: Record<string, string | undefined> & { json?: boolean }, command: Command) => {
      const now = Date.now();
      const options = listOptions(o, now);
      await cli.withStore(command, async (admin) => {
        const page = await checked(() => admin.workflows(options));
        if (o.json) return cli.out.json(page);
        if (!page.items.length) return cli.out.line(o.cursor ? t`no more runs` : t`no workflow runs match`);
        cli.out.line(runsTable(page.items, cli.out.color, now));
        if (page.cursor) cli.out.line(t`\n${cli.out.color.dim(`more: ${repeatCommand(command, [], { cursor: page.cursor })}`)}`);
      });
    });

  group
    .command("show")
    .description("show one run: its fields, journal, child runs and the events no wait took yet")
    .argument("<id>", "the run id")
    .option("--steps-from <n>", "the first journal entry to show", "0")
    .option("--steps-limit <n>", "most journal entries to show, 1 to 1000", "500")
    .option("--json", "print JSON (admin.workflowRun())")
    .action(async (id: string, o: { stepsFrom: string; stepsLimit: string; json?: boolean }, command: Command) => {
      const checkedId = runId(id);
      const options = {
        stepsFrom: parseCount("--steps-from", o.stepsFrom, 0, MAX_ENTRY),
        stepsLimit: parseCount("--steps-limit", o.stepsLimit, 1, 1000),
      };
      await cli.withStore(command, async (admin) => {
        const detail = await admin.workflowRun(checkedId, options);
        if (!detail)
          throw new CliError(`no workflow run with id ${id} in this store (it never existed, or retention deleted it)`, EXIT.notFound);
        if (o.json) cli.out.json(detail);
        else cli.out.line(runDetail(detail, cli.out.color, Date.now()));
      });
    });
}

/** Registers `cancel`, `restart`, `fork`, `skip` and `send-event` on the `workflows` group. */
function registerActions(group: Command, cli: Cli): void {
  const done = (json: boolean | undefined, value: Record<string, unknown>, text: ReturnType<typeof t>): void =>
    json ? cli.out.json(value) : cli.out.line(text);

  group
    .command("cancel")
    .description("cancel a run (and its child runs); a started worker of its pool carries it out")
    .argument("<id>", "the run id")
    .option("-y, --yes", "do not ask for confirmation")
    .option("--json", "print JSON")
    .action(async (id: string, o: { yes?: boolean; json?: boolean }, command: Command) => {
      const checkedId = runId(id);
      await cli.withStore(command, async (admin) => {
        const run = await admin.workflow(checkedId);
        if (!run) throw new CliError(`no workflow run with id ${id} in this store`, EXIT.notFound);
        await confirmOrStop(cli, o.yes, t`Cancel workflow run ${id} (${run.name})?`);
        if (!(await admin.cancelWorkflow(checkedId)))
          throw new CliError(`run ${id} has finished (${run.state}); nothing to cancel`, EXIT.notApplicable);
        done(o.json, { workflowId: id, outcome: "cancel requested" }, t`${id}   cancel requested`);
      });
    });

  group
    .command("restart")
    .description("continue a failed, canceled or blocked run from journal entry --from (entries before it are kept)")
    .argument("<id>", "the run id")
    .requiredOption("--from <n>", "the first journal entry to drop and run again")
    .option("-y, --yes", "do not ask for confirmation")
    .option("--json", "print JSON")
    .action(async (id: string, o: { from: string; yes?: boolean; json?: boolean }, command: Command) => {
      const checkedId = runId(id);
      const from = parseCount("--from", o.from, 0, MAX_ENTRY);
      await cli.withStore(command, async (admin) => {
        await confirmOrStop(cli, o.yes, t`Restart workflow run ${id} from entry ${from}?`);
        await act(id, () => admin.restartWorkflow(checkedId, { from }));
        done(o.json, { workflowId: id, outcome: "restarted", from }, t`${id}   restarted from entry ${from}`);
      });
    });

  group
    .command("fork")
    .description("start a new run with a copy of the run's journal before entry --from; the run is not changed")
    .argument("<id>", "the run id")
    .requiredOption("--from <n>", "the first journal entry not copied")
    .option("--workflow-id <id>", "the new run's id (default: a new id)")
    .option("--json", "print JSON")
    .action(async (id: string, o: { from: string; workflowId?: string; json?: boolean }, command: Command) => {
      const checkedId = runId(id);
      const from = parseCount("--from", o.from, 0, MAX_ENTRY);
      if (o.workflowId !== undefined) runId(o.workflowId, "--workflow-id");
      await cli.withStore(command, async (admin) => {
        const options = o.workflowId === undefined ? { from } : { from, workflowId: o.workflowId };
        const forkId = await act(id, () => admin.forkWorkflow(checkedId, options));
        done(o.json, { workflowId: id, outcome: "forked", from, forkId }, t`${id}   forked from entry ${from} as ${forkId}`);
      });
    });

  group
    .command("skip")
    .description("let a blocked run go on without the journal entry it is blocked at")
    .argument("<id>", "the run id")
    .option("-y, --yes", "do not ask for confirmation")
    .option("--json", "print JSON")
    .action(async (id: string, o: { yes?: boolean; json?: boolean }, command: Command) => {
      const checkedId = runId(id);
      await cli.withStore(command, async (admin) => {
        const run = await admin.workflow(checkedId);
        if (!run) throw new CliError(`no workflow run with id ${id} in this store`, EXIT.notFound);
        if (run.blocked) await confirmOrStop(cli, o.yes, t`Skip ${blockedText(run.blocked)} of workflow run ${id}?`);
        await act(id, () => admin.skipWorkflowStep(checkedId));
        const n = run.blocked?.n ?? null;
        done(o.json, { workflowId: id, outcome: "skipped", entry: n }, t`${id}   skipped entry ${n ?? "-"}`);
      });
    });

  group
    .command("send-event")
    .description("send an event to a run: the oldest wait for it takes it, or the next one")
    .argument("<id>", "the run id")
    .argument("<name>", "the event name")
    .option("--payload <json>", "the event's payload, JSON (default null)")
    .option("--json", "print JSON")
    .action(async (id: string, name: string, o: { payload?: string; json?: boolean }, command: Command) => {
      const checkedId = runId(id);
      const event = usage("<name>", () => checkEventName("name", name));
      const payload = parsePayload(o.payload);
      await cli.withStore(command, async (admin: WorkpoolAdmin) => {
        await act(id, () => admin.sendWorkflowEvent(checkedId, event, payload));
        done(o.json, { workflowId: id, outcome: "sent", event: name }, t`${id}   sent event "${name}"`);
      });
    });
}

/** `--payload` as a value; not JSON is a usage error. */
function parsePayload(text: string | undefined): unknown {
  if (text === undefined) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new CliError(`--payload: not JSON (${(e as Error).message}); nothing was done`, EXIT.usage);
  }
}

/** Registers the `workflows` command group. */
export function registerWorkflows(program: Command, cli: Cli): void {
  const group = program.command("workflows").description("list, show and operate workflow runs (workflows --help for its commands)");
  registerReads(group, cli);
  registerActions(group, cli);
  registerVersions(group, cli);
  for (const command of group.commands) command.exitOverride();
}
