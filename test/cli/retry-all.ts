/**
 * `workpool retry-all`: what it prints and how it exits, off a terminal (a child process):
 * --dry-run lists and changes nothing, a run without --yes is refused (2) and changes
 * nothing, --yes retries each matching work once, bad flags are usage errors (2).
 */
import { describe, expect, test } from "vitest";
import { Workpool } from "../../src/index.js";
import { quietLogger } from "../helpers/common.js";
import { runCli, startCli } from "./run.js";
import { expectExit, populate, useStores, type CliStore, type CliTarget } from "./target.js";

/** The work's `retriedAs`, as `show --json` gives it. */
async function retriedAs(s: CliStore, id: string): Promise<string | null> {
  return (JSON.parse((await runCli([...s.args, "show", id, "--json"])).stdout) as { retriedAs: string | null }).retriedAs;
}

export function defineCliRetryAllTests(target: CliTarget): void {
  describe(`workpool CLI: ${target.name}: retry-all`, () => {
    const fresh = useStores(target);

    test("--dry-run lists the matching work; without --yes off a terminal it is refused (2); --yes retries each work once", async () => {
      const s = await fresh();
      const ids = await populate(s.store);
      const dry = await runCli([...s.args, "retry-all", "mail", "--state", "failed", "--dry-run"]);
      expectExit(dry, 0);
      expect(dry.stdout).toBe(`would retry 1 failed work of pool "mail"\n${ids.failed}\n`);
      expect(JSON.parse((await runCli([...s.args, "retry-all", "mail", "--state", "failed", "--dry-run", "--json"])).stdout)).toEqual({
        pool: "mail",
        dryRun: true,
        count: 1,
        ids: [ids.failed],
      });
      const none = await runCli([...s.args, "retry-all", "mail", "--state", "failed", "--handler", "bounce", "--key", "k", "--dry-run"]);
      expect(none.stdout).toBe(`would retry 0 failed work of pool "mail" (handler bounce, key k)\n`);

      const refused = await runCli([...s.args, "retry-all", "mail", "--state", "failed"]);
      expectExit(refused, 2);
      expect(refused.stderr).toBe("workpool: retry-all would retry 1 work; pass --yes to retry them (or --dry-run to list them)\n");
      expect(refused.stdout).toBe("");
      expect(await retriedAs(s, ids.failed)).toBeNull();

      const done = await runCli([...s.args, "retry-all", "mail", "--state", "failed", "--yes"]);
      expectExit(done, 0);
      const newId = /^retried 1 failed work of pool "mail"\n(\S+) {3}retried as ([0-9A-Z]{26})\n$/.exec(done.stdout);
      expect(newId?.[1]).toBe(ids.failed);
      expect(await retriedAs(s, ids.failed)).toBe(newId![2]);
      // Nothing is left to retry: without --yes that is said (no question to ask); with it, a run retries none.
      const nothing = await runCli([...s.args, "retry-all", "mail", "--state", "failed"]);
      expectExit(nothing, 0);
      expect(nothing.stdout).toBe(`nothing to retry: no failed work of pool "mail" that was not retried already\n`);
      expect(JSON.parse((await runCli([...s.args, "retry-all", "mail", "--state", "failed", "--yes", "--json"])).stdout)).toEqual({
        pool: "mail",
        dryRun: false,
        count: 0,
        retried: [],
      });

      expectExit(await runCli([...s.args, "cancel", ids.pending]), 0);
      const canceled = JSON.parse((await runCli([...s.args, "retry-all", "mail", "--state", "canceled", "--yes", "--json"])).stdout) as {
        count: number;
        retried: { id: string; newId: string }[];
      };
      expect(canceled).toMatchObject({ pool: "mail", dryRun: false, count: 1, retried: [{ id: ids.pending }] });
      expect(JSON.parse((await runCli([...s.args, "pools", "--json"])).stdout)).toMatchObject([{ counts: { pending: 2, retrying: 1 } }]);
    });

    test("a reader that stops early (`| head`) ends the command quietly, with exit code 0", async () => {
      const s = await fresh();
      const pool = new Workpool(s.store, { name: "bulk", logger: quietLogger });
      const send = pool.defineAction("send", () => null);
      await pool.enqueueActionBatch(
        send,
        Array.from({ length: 4000 }, () => null),
      );
      await pool.cancelAll();
      // 4,000 pairs of ids are far more than a pipe holds: the command is still writing when its reader goes.
      const cli = startCli([...s.args, "retry-all", "bulk", "--state", "canceled", "--yes", "--json"]);
      cli.proc.stdout!.once("data", () => cli.proc.stdout!.destroy());
      expect(await cli.exited).toBe(0);
      expect(cli.stderr()).toBe("");
    });

    test("bad flags are usage errors (2) and change nothing; an unknown pool is not found (3)", async () => {
      const s = await fresh();
      const ids = await populate(s.store);
      for (const args of [
        ["--yes"],
        ["--state", "success", "--yes"],
        ["--state", "failed", "--finished-before", "2030-02-31", "--yes"],
        ["--state", "failed", "--finished-after", "soon", "--yes"],
        ["--state", "failed", "--finished-after", "1d", "--finished-before", "2d", "--yes"],
        ["--state", "failed", "--handler", "", "--yes"],
      ]) {
        const run = await runCli([...s.args, "retry-all", "mail", ...args]);
        expectExit(run, 2);
        expect(run.stdout).toBe("");
      }
      const range = await runCli([
        ...s.args,
        "retry-all",
        "mail",
        "--state",
        "failed",
        "--finished-after",
        "1d",
        "--finished-before",
        "2d",
        "--yes",
      ]);
      expect(range.stderr).toMatch(/^workpool: finishedBefore: must be later than finishedAfter/);
      expect((await runCli([...s.args, "retry-all", "mail", "--state", "done"])).stderr).toMatch(/Allowed choices are failed, canceled/);
      expect(await retriedAs(s, ids.failed)).toBeNull();
      expectExit(await runCli([...s.args, "retry-all", "nope", "--state", "failed", "--yes"]), 3);
    });
  });
}
