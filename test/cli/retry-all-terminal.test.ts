/**
 * `workpool retry-all` at a terminal: it counts first and asks with the count; a "no" is
 * exit 6 and changes nothing, a "yes" retries. Run in this process with streams that say
 * they are a terminal (a child process has none).
 */
import { PassThrough } from "node:stream";
import { afterEach, expect, test } from "vitest";
import { workpoolAdmin } from "../../src/admin/index.js";
import { run } from "../../src/cli/program.js";
import { Workpool } from "../../src/index.js";
import { quietLogger } from "../helpers/common.js";
import { openTestStore } from "../helpers/stores.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** A terminal: the answers typed, one per question, and everything printed. */
function terminal(answers: string[]) {
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  const stdout = Object.assign(new PassThrough(), { isTTY: true });
  const stderr = new PassThrough();
  let out = "";
  stdout.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
    if (chunk.includes("[y/N]")) stdin.write(`${answers.shift() ?? ""}\n`);
  });
  stderr.resume();
  return { io: { stdin, stdout, stderr, env: { NO_COLOR: "1" } }, output: () => out };
}

/** A store file whose pool "mail" has two failed work and one that succeeded. */
async function storeWithFailedWork(): Promise<{ path: string; failed: string[] }> {
  const t = await openTestStore("sqlite");
  const pool = new Workpool(t.store, { name: "mail", logger: quietLogger });
  const bounce = pool.defineAction("bounce", (_c, n: number) => {
    if (n > 0) throw new Error("mailbox does not exist");
    return n;
  });
  const [ok, ...failed] = await pool.enqueueActionBatch(bounce, [0, 1, 2]);
  await pool.runOnce();
  expect((await workpoolAdmin(t.store).get(ok!))!.resultKind).toBe("success");
  await t.store.close();
  cleanups.push(() => t.cleanup());
  return { path: t.path, failed };
}

test("retry-all asks with the count on a terminal: no is exit 6 and nothing changes; yes retries them", async () => {
  const { path, failed } = await storeWithFailedWork();
  const declined = terminal(["n"]);
  expect(await run(["--db", path, "retry-all", "mail", "--state", "failed"], declined.io)).toBe(6);
  expect(declined.output()).toContain('Retry 2 failed work of pool "mail"? [y/N]');
  const check = terminal([]);
  expect(await run(["--db", path, "retry-all", "mail", "--state", "failed", "--dry-run", "--json"], check.io)).toBe(0);
  expect(JSON.parse(check.output())).toMatchObject({ count: 2, ids: [...failed].sort() });

  const accepted = terminal(["y"]);
  expect(await run(["--db", path, "retry-all", "mail", "--state", "failed"], accepted.io)).toBe(0);
  expect(accepted.output()).toContain('retried 2 failed work of pool "mail"');
  const skipped = terminal([]);
  expect(await run(["--db", path, "retry-all", "mail", "--state", "failed", "--yes"], skipped.io)).toBe(0);
  expect(skipped.output()).not.toContain("[y/N]");
  expect(skipped.output()).toBe('retried 0 failed work of pool "mail"\n');
  const pools = terminal([]);
  expect(await run(["--db", path, "pools", "--json"], pools.io)).toBe(0);
  expect(JSON.parse(pools.output())).toMatchObject([{ counts: { pending: 2, failed: 2, success: 1 } }]);
});

test("retry-all prints the first 20 ids and how many more; --json lists them all", async () => {
  const t = await openTestStore("sqlite");
  cleanups.push(() => t.cleanup());
  const pool = new Workpool(t.store, { name: "mail", logger: quietLogger });
  const ids = await pool.enqueueActionBatch(
    pool.defineAction("send", () => 1),
    Array.from({ length: 22 }, (_, i) => i),
    { runAfter: 3_600_000 },
  );
  expect(await workpoolAdmin(t.store).cancelAll("mail")).toBe(22);
  await t.store.close();
  const sorted = [...ids].sort();
  const dry = terminal([]);
  expect(await run(["--db", t.path, "retry-all", "mail", "--state", "canceled", "--handler", "send", "--dry-run"], dry.io)).toBe(0);
  expect(dry.output()).toBe(
    ['would retry 22 canceled work of pool "mail" (handler send)', ...sorted.slice(0, 20), "… and 2 more (--json lists them all)", ""].join(
      "\n",
    ),
  );
  const all = terminal([]);
  expect(await run(["--db", t.path, "retry-all", "mail", "--state", "canceled", "--yes", "--json"], all.io)).toBe(0);
  expect((JSON.parse(all.output()) as { retried: { id: string }[] }).retried.map((r) => r.id)).toEqual(sorted);
});
