/**
 * The commands that act on ids, one by one: a malformed id is refused before anything is
 * done; well-formed ids are each acted on and each outcome printed, the exit code being
 * the first failure's. A work is retried once. `--before` takes only real days.
 */
import { describe, expect, test } from "vitest";
import { runCli } from "./run.js";
import { expectExit, populate, useStores, type CliStore, type CliTarget } from "./target.js";

const UNKNOWN = "00000000000000000000000000";

/** The state of one work, as `show --json` gives it. */
async function stateOf(s: CliStore, id: string): Promise<{ state: string; resultKind: string | null; retriedAs: string | null }> {
  return JSON.parse((await runCli([...s.args, "show", id, "--json"])).stdout) as {
    state: string;
    resultKind: string | null;
    retriedAs: string | null;
  };
}

export function defineCliActingTests(target: CliTarget): void {
  describe(`workpool CLI: ${target.name}: acting on ids`, () => {
    const fresh = useStores(target);

    test("a malformed id is refused (2) before any id is acted on; the others are acted on one by one, each reported", async () => {
      const s = await fresh();
      const ids = await populate(s.store);
      const refused = await runCli([...s.args, "cancel", ids.pending, "not-a-work-id"]);
      expectExit(refused, 2);
      expect(refused.stdout).toBe("");
      expect(refused.stderr).toMatch(/<id>: not a work id .*"not-a-work-id"; nothing was done/);
      expect(await stateOf(s, ids.pending)).toMatchObject({ state: "pending" });
      const notRetried = await runCli([...s.args, "retry", ids.failed, "also-bad"]);
      expectExit(notRetried, 2);
      expect(await stateOf(s, ids.failed)).toMatchObject({ retriedAs: null });

      // Exit code: the first failure's (4 here), and the others were done.
      const mixed = await runCli([...s.args, "cancel", ids.pending, ids.ok1, UNKNOWN]);
      expectExit(mixed, 4);
      expect(mixed.stdout).toBe(`${ids.pending}   canceled\n${ids.ok1}   already finished\n${UNKNOWN}   not found\n`);
      const notFoundFirst = await runCli([...s.args, "cancel", UNKNOWN, ids.retrying, "--json"]);
      expectExit(notFoundFirst, 3);
      expect(JSON.parse(notFoundFirst.stdout)).toEqual([
        { id: UNKNOWN, outcome: "not found" },
        { id: ids.retrying, outcome: "canceled" },
      ]);

      const retries = await runCli([...s.args, "retry", ids.failed, ids.ok1, UNKNOWN, ids.pending]);
      expectExit(retries, 4);
      const lines = retries.stdout.trimEnd().split("\n");
      expect(lines).toHaveLength(4);
      expect(lines[0]).toMatch(new RegExp(`^${ids.failed} {3}retried as [0-9A-Z]{26}$`));
      expect(lines[1]).toMatch(new RegExp(`^${ids.ok1} {3}not retried: work ${ids.ok1} is finished with success`));
      expect(lines[2]).toBe(`${UNKNOWN}   not found`);
      expect(lines[3]).toMatch(new RegExp(`^${ids.pending} {3}retried as [0-9A-Z]{26}$`));
    });

    test("a second retry of a work is refused (4), naming the work it was retried as; show prints it", async () => {
      const s = await fresh();
      const ids = await populate(s.store);
      const first = await runCli([...s.args, "retry", ids.failed, "--json"]);
      expectExit(first, 0);
      const [{ newId }] = JSON.parse(first.stdout) as [{ newId: string }];
      const second = await runCli([...s.args, "retry", ids.failed]);
      expectExit(second, 4);
      expect(second.stdout).toBe(`${ids.failed}   not retried: work ${ids.failed} was already retried as ${newId}\n`);
      expect((await runCli([...s.args, "show", ids.failed])).stdout).toMatch(new RegExp(`\\nRetried as {3}${newId}\\n`));
      expect(await stateOf(s, ids.failed)).toMatchObject({ retriedAs: newId });
      expect(JSON.parse((await runCli([...s.args, "pools", "--json"])).stdout)).toMatchObject([{ counts: { pending: 2 } }]);
    });

    test("--before refuses a day the calendar does not have (2), naming the option; real days, leap days too, are taken", async () => {
      const s = await fresh();
      await populate(s.store);
      for (const [command, when] of [
        ["purge", "2030-02-31"],
        ["purge", "2030-04-31T12:00:00Z"],
        ["cancel-all", "2029-02-29"],
        ["purge", "2030-13-01"],
      ] as const) {
        const extra = command === "purge" ? ["--finished"] : ["--yes"];
        const run = await runCli([...s.args, command, "mail", ...extra, "--before", when]);
        expectExit(run, 2);
        expect(run.stderr).toMatch(/^workpool: --before: /);
      }
      expect((await runCli([...s.args, "purge", "mail", "--finished", "--before", "2030-02-31"])).stderr).toContain(
        "--before: 2030-02-31 is not a day of the calendar",
      );
      expect(JSON.parse((await runCli([...s.args, "pools", "--json"])).stdout)).toMatchObject([
        { counts: { pending: 1, retrying: 1, success: 2, failed: 1 } },
      ]);
      expectExit(await runCli([...s.args, "purge", "mail", "--finished", "--before", "2020-02-29"]), 0);
      const leap = await runCli([...s.args, "cancel-all", "mail", "--yes", "--before", "2028-02-29T00:00:00Z"]);
      expectExit(leap, 0);
      expect(leap.stdout).toBe('canceled 2 work in pool "mail"\n');
    });
  });
}
