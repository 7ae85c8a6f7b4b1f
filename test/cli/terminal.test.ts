/**
 * The CLI at a terminal: destructive commands ask first (a "no" is exit 6 and changes
 * nothing, `--yes` skips the question) and output is coloured. A child process has no
 * terminal, so these run the command line in this process with streams that say they are
 * one.
 */
import { PassThrough } from "node:stream";
import Database from "better-sqlite3";
import { afterEach, expect, test } from "vitest";
import { run } from "../../src/cli/program.js";
import { Workpool } from "../../src/index.js";
import { quietLogger } from "../helpers/common.js";
import { openTestStore } from "../helpers/stores.js";
import { ESCAPED, HOSTILE } from "./terminal-safety.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** A terminal: what the user types (answers, one per line) and everything printed. */
function terminal(answers: string[]) {
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  const stdout = Object.assign(new PassThrough(), { isTTY: true });
  const stderr = new PassThrough();
  let out = "";
  stdout.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
    // Answer each question as it is asked.
    if (chunk.includes("[y/N]")) stdin.write(`${answers.shift() ?? ""}\n`);
  });
  stderr.resume();
  return { io: { stdin, stdout, stderr, env: {} }, output: () => out };
}

async function storeWithPendingWork(): Promise<{ path: string; ids: string[] }> {
  const t = await openTestStore("sqlite");
  const { store } = t;
  const pool = new Workpool(store, { name: "mail", logger: quietLogger });
  const ids = await pool.enqueueActionBatch(
    pool.defineAction("send", () => 1),
    [1, 2],
    { runAfter: 3_600_000 },
  );
  await store.close();
  cleanups.push(() => t.cleanup());
  return { path: t.path, ids };
}

test("cancel asks first on a terminal: no is exit 6 and nothing changes; yes cancels", async () => {
  const { path, ids } = await storeWithPendingWork();
  const declined = terminal(["n"]);
  expect(await run(["--db", path, "cancel", ids[0]!], declined.io)).toBe(6);
  expect(declined.output()).toContain("Cancel 1 work? [y/N]");
  const pools = terminal([]);
  expect(await run(["--db", path, "pools", "--json"], pools.io)).toBe(0);
  expect(JSON.parse(pools.output())).toMatchObject([{ counts: { pending: 2, canceled: 0 } }]);

  const accepted = terminal(["y"]);
  expect(await run(["--db", path, "cancel", ids[0]!], accepted.io)).toBe(0);
  expect(accepted.output()).toContain(`${ids[0]}   canceled`);
  const skipped = terminal([]);
  expect(await run(["--db", path, "purge", "mail", "--pending", "--yes"], skipped.io)).toBe(0);
  expect(skipped.output()).not.toContain("[y/N]");
  expect(skipped.output()).toContain('purged 1 pending work from pool "mail"');
});

test("on a terminal output is coloured, unless NO_COLOR is set", async () => {
  const { path } = await storeWithPendingWork();
  const tty = terminal([]);
  expect(await run(["--db", path, "pause", "mail"], tty.io)).toBe(0);
  const coloured = terminal([]);
  expect(await run(["--db", path, "pools"], coloured.io)).toBe(0);
  expect(coloured.output()).toContain("\u001b[33mpaused (10)\u001b[39m");
  // Columns are aligned on what is visible: the colour codes take no room.
  const [header, row] = coloured.output().split("\n");
  // eslint-disable-next-line no-control-regex
  expect(row!.replace(/\u001b\[\d+m/g, "").indexOf("2")).toBe(header!.indexOf("PENDING"));
  const plain = terminal([]);
  plain.io.env = { NO_COLOR: "1" };
  expect(await run(["--db", path, "pools"], plain.io)).toBe(0);
  expect(plain.output()).not.toContain("\u001b[");
});

test("on a terminal, the only escape sequences are the colours: stored text and prompts are escaped", async () => {
  const { path, ids } = await storeWithPendingWork();
  const db = new Database(path);
  db.prepare("UPDATE workpool_work SET name = ?, key = ? WHERE id = ?").run(`n${HOSTILE}`, `k${HOSTILE}`, ids[0]);
  db.close();
  const tty = terminal(["n"]);
  expect(await run(["--db", path, "ls", "mail"], tty.io)).toBe(0);
  expect(await run(["--db", path, "show", ids[0]!], tty.io)).toBe(0);
  expect(await run(["--db", path, "stats"], tty.io)).toBe(0);
  expect(await run(["--db", path, "cancel-all", "mail", "--key", `k${HOSTILE}`], tty.io)).toBe(6);
  const out = tty.output();
  expect(out).toContain(`n${ESCAPED}`);
  expect(out).toContain(`Cancel the unfinished work of pool "mail" (key k${ESCAPED})? [y/N]`);
  // Up to the prompt (where readline moves the cursor and echoes the answer): colours, line feeds and printable text.
  const printed = out.slice(0, out.indexOf("Cancel the unfinished"));
  // eslint-disable-next-line no-control-regex
  const uncoloured = printed.replace(/\u001b\[(\d+m|1G|0J)/g, "");
  // eslint-disable-next-line no-control-regex
  expect(uncoloured).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  expect(printed).toContain("\u001b[1mmail\u001b[22m"); // colour is on
});
