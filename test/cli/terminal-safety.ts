/**
 * Stored text never drives the terminal: control characters in anything the CLI prints
 * from the store (names, handler names, keys, pool names, args, errors, error data,
 * stacks, return values) are shown escaped, in tables and in plain output; `--json` stays
 * JSON with the same values.
 */
import { describe, expect, test } from "vitest";
import { ManualClock, Workpool, WorkError, type Store } from "../../src/index.js";
import { quietLogger } from "../helpers/common.js";
import { runCli, type CliRun } from "./run.js";
import { expectExit, useStores, type CliStore, type CliTarget } from "./target.js";

/** Sets the window title, clears the screen, returns the carriage, forges a table row, and starts a C1 CSI. */
export const HOSTILE = "\u001b]0;pwned\u0007\u001b[2J\r\nID   FORGED   row\u009b31m";
/** HOSTILE as the CLI shows it. */
export const ESCAPED = "\\x1b]0;pwned\\x07\\x1b[2J\\r\\nID   FORGED   row\\x9b31m";

/** Any control character but the line feed (C0, DEL, C1): what a terminal would obey. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

/** Expects a run's output, both streams, to hold no control character but line feeds. */
function expectSafe(run: CliRun): void {
  expect(CONTROL.exec(run.stdout), run.stdout).toBeNull();
  expect(CONTROL.exec(run.stderr), run.stderr).toBeNull();
}

/** Work whose stored text is hostile everywhere: through the API where it allows it, with plain SQL for names it refuses. */
async function hostileWork(s: CliStore): Promise<{ failed: string; ok: string; pending: string; elsewhere: string }> {
  const pool = new Workpool(s.store as Store<unknown>, { name: "mail", logger: quietLogger, clock: new ManualClock(Date.now()) });
  const bounce = pool.defineAction("bounce", () => {
    const e = new WorkError(`boom ${HOSTILE}`, { note: HOSTILE });
    e.stack = `WorkError: boom\n    at handler (${HOSTILE})`;
    throw e;
  });
  const echo = pool.defineAction("echo", (_c, text: string) => text);
  const failed = await pool.enqueueAction(bounce, { text: HOSTILE }, { key: `k${HOSTILE}` });
  const ok = await pool.enqueueAction(echo, HOSTILE);
  await pool.runOnce();
  const pending = await pool.enqueueAction(echo, "later", { runAfter: 3_600_000 });
  const elsewhere = await pool.enqueueAction(echo, "x", { runAfter: 3_600_000 });
  // Names the API refuses, as another tool (or a hand-written UPDATE) could store them.
  await s.updateWork(failed, { name: `n${HOSTILE}`, fn_name: `h${HOSTILE}` });
  await s.updateWork(elsewhere, { pool: `evil${HOSTILE}` });
  return { failed, ok, pending, elsewhere };
}

export function defineTerminalSafetyTests(target: CliTarget): void {
  describe(`workpool CLI: ${target.name}: stored text is shown escaped`, () => {
    const fresh = useStores(target);

    test("tables and plain output escape control characters: no forged row, no escape sequence, nothing lost", async () => {
      const s = await fresh();
      const w = await hostileWork(s);

      const ls = await runCli([...s.args, "ls", "mail"]);
      expectExit(ls, 0);
      expectSafe(ls);
      const rows = ls.stdout.trimEnd().split("\n");
      expect(rows.map((r) => r.slice(0, 26))).toEqual(["ID".padEnd(26), w.pending, w.ok, w.failed]);
      expect(rows[3]).toContain(`   h${ESCAPED}   n${ESCAPED}   k${ESCAPED}   0 `);
      expect(rows[3]).toMatch(/ {3}0 {3,}failed {3,}1 {3,}/);

      const show = await runCli([...s.args, "show", w.failed, "--stack"]);
      expectExit(show, 0);
      expectSafe(show);
      for (const line of [
        `Handler      h${ESCAPED} (action)`,
        `Name         n${ESCAPED}`,
        `Key          k${ESCAPED}`,
        `Args         {"text":"\\u001b]0;pwned\\u0007\\u001b[2J\\r\\nID   FORGED   row\\u009b31m"}`,
        `Result       failed: boom ${ESCAPED}`,
        `Error data   {"note":"\\u001b]0;pwned\\u0007\\u001b[2J\\r\\nID   FORGED   row\\u009b31m"}`,
      ]) {
        expect(show.stdout).toContain(`\n${line}\n`);
      }
      expect(show.stdout).toMatch(new RegExp(`\\n1 +failed +.*WorkError: boom \\\\x1b\\]0;pwned\\\\x07\\\\x1b\\[2J\\\\r\\n`));
      // A stack's line breaks are its layout and stay; every other control character in it is escaped.
      expect(show.stdout).toContain(`\nattempt 1\nWorkError: boom\n    at handler (${ESCAPED.replace("\\n", "\n")})\n`);

      const success = await runCli([...s.args, "show", w.ok]);
      expectSafe(success);
      expect(success.stdout).toContain(`\nResult       success: "\\u001b]0;pwned\\u0007\\u001b[2J\\r\\nID   FORGED   row\\u009b31m"\n`);

      for (const args of [["pools"], ["stats"], ["metrics"], ["retry", w.failed], ["cancel", w.pending]]) {
        const run = await runCli([...s.args, ...args]);
        expectExit(run, 0);
        expectSafe(run);
      }
      const pools = await runCli([...s.args, "pools"]);
      expect(pools.stdout.trimEnd().split("\n")).toHaveLength(3);
      expect(pools.stdout).toContain(`\nevil${ESCAPED}   `);
      expect((await runCli([...s.args, "metrics"])).stdout).toContain(`pool="evil${ESCAPED}"`);
      // Text from the command line, echoed in a message, is escaped as well.
      const missing = await runCli([...s.args, "stats", `nope${HOSTILE}`]);
      expectExit(missing, 3);
      expectSafe(missing);
      expect(missing.stderr).toContain(`no pool named "nope${ESCAPED}"`);
      const refused = await runCli([...s.args, "ls", `evil${HOSTILE}`]);
      expectExit(refused, 2);
      expectSafe(refused);
    });

    test("--json stays JSON with the stored values; DEL and C1 controls are \\u-escaped in it", async () => {
      const s = await fresh();
      const w = await hostileWork(s);
      const show = await runCli([...s.args, "show", w.failed, "--json"]);
      expectExit(show, 0);
      expectSafe(show);
      expect(JSON.parse(show.stdout)).toMatchObject({
        handler: `h${HOSTILE}`,
        name: `n${HOSTILE}`,
        key: `k${HOSTILE}`,
        args: { text: HOSTILE },
        result: { kind: "failed", error: `boom ${HOSTILE}`, errorData: { note: HOSTILE } },
      });
      const pools = await runCli([...s.args, "pools", "--json"]);
      expectSafe(pools);
      expect((JSON.parse(pools.stdout) as { name: string }[]).map((p) => p.name)).toEqual([`evil${HOSTILE}`, "mail"]);
      const ls = await runCli([...s.args, "ls", "mail", "--json"]);
      expectSafe(ls);
      expect((JSON.parse(ls.stdout) as { items: { handler: string }[] }).items.map((i) => i.handler)).toContain(`h${HOSTILE}`);
    });
  });
}
