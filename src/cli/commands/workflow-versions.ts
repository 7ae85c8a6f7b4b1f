/**
 * `workpool workflows versions`: the workflow versions live processes define and the
 * versions unfinished runs were started by, so an operator sees runs whose version no live
 * process defines (a pinned one waits for such a process).
 */
import type { Command } from "commander";
import type { WorkflowVersionInfo } from "../../workflow/types.js";
import { checkName } from "../../checks.js";
import type { Cli } from "../cli.js";
import { CliError, EXIT } from "../exit-codes.js";
import { table } from "../format.js";
import { t, type Colors, type Shown } from "../terminal-text.js";

/** Versions as a table: those no live process defines first, each marked. */
export function versionsTable(rows: readonly WorkflowVersionInfo[], c: Colors): Shown {
  const sorted = [...rows].sort((a, b) => Number(a.live) - Number(b.live));
  return table(
    ["pool", "workflow", "version", "pinned", "unfinished runs", "live processes"],
    sorted.map((v) => [
      v.pool,
      v.name,
      v.version ?? "-",
      v.pinned ? "yes" : "no",
      v.unfinishedRuns,
      v.live ? v.processes : v.unfinishedRuns > 0 ? c.red("none") : c.dim("none"),
    ]),
  );
}

/** Registers `versions` on the `workflows` group. */
export function registerVersions(group: Command, cli: Cli): void {
  group
    .command("versions")
    .description("list workflow versions: those live processes define, and those unfinished runs were started by")
    .option("--pool <pool>", "only versions of this pool")
    .option("--json", "print JSON (admin.workflowVersions())")
    .action(async (o: { pool?: string; json?: boolean }, command: Command) => {
      if (o.pool !== undefined) {
        try {
          checkName("pool", o.pool);
        } catch (e) {
          throw new CliError(`--pool: ${(e as Error).message.replace(/^workpool: [^:]+: /, "")}; nothing was done`, EXIT.usage);
        }
      }
      await cli.withStore(command, async (admin) => {
        const rows = await admin.workflowVersions(o.pool);
        if (o.json) return cli.out.json(rows);
        if (!rows.length) return cli.out.line(t`no workflow versions: no live process defines a workflow and no run is unfinished`);
        cli.out.line(versionsTable(rows, cli.out.color));
      });
    });
}
