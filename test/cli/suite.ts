/**
 * The `workpool` CLI, run as a child process (the built bin) against a real store: the
 * output of each command, --json, and the exit codes. Each store's *.test.ts calls
 * defineCliTests with its target.
 */
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock, Workpool, type Store } from "../../src/index.js";
import { quietLogger } from "../helpers/common.js";
import { parseExposition } from "../helpers/prometheus.js";
import { runCli, startCli, type CliRun } from "./run.js";

/** A store for one test, and the command-line arguments that name it. */
export interface CliStore {
  store: Store<unknown>;
  args: string[];
  /** The same store named through the environment instead of --db: the variables, and the arguments still needed. */
  env: { vars: Record<string, string>; args: string[] };
  dispose(): Promise<void>;
}

/** How a store's CLI tests get their stores. */
export interface CliTarget {
  name: string;
  /** A migrated, empty store. */
  create(): Promise<CliStore>;
  /** Arguments naming a database (file or schema) that does not exist, and whether it exists now. */
  absent(): Promise<{ args: string[]; exists(): Promise<boolean>; dispose(): Promise<void> }>;
}

/** The work the read tests look at, in pool "mail": the ids by what happened to them. */
async function populate(store: Store<unknown>): Promise<Record<"ok1" | "ok2" | "failed" | "retrying" | "pending", string>> {
  // Ids are ordered by time: a clock that moves 1 ms per enqueue makes their order the enqueue order.
  const clock = new ManualClock(Date.now());
  const pool = new Workpool(store, { name: "mail", logger: quietLogger, clock });
  const step = (): void => clock.advance(1);
  const send = pool.defineAction("send", (_c, to: string) => `sent to ${to}`);
  const bounce = pool.defineAction("bounce", () => {
    throw new TypeError("boom: mailbox does not exist");
  });
  const flaky = pool.defineAction("flaky", () => {
    throw new Error("try later");
  });
  const ok1 = await pool.enqueueAction(send, "a@b.c", { name: "welcome" });
  step();
  const ok2 = await pool.enqueueAction(send, "d@e.f");
  step();
  const failed = await pool.enqueueAction(bounce, {});
  step();
  const retrying = await pool.enqueueAction(flaky, {}, { retry: { maxAttempts: 3, initialBackoffMs: 3_600_000, base: 2 } });
  step();
  const pending = await pool.enqueueAction(send, "later@b.c", { runAfter: 3_600_000, key: "tenant-7", logLevel: "DEBUG" });
  await pool.runOnce();
  return { ok1, ok2, failed, retrying, pending };
}

/** Expects a run to exit with `code`, showing its output when it does not. */
function expectExit(run: CliRun, code: number): void {
  expect({ code: run.code, stderr: run.stderr }).toMatchObject({ code });
}

/** The column at which `header` starts in a table's first line. */
function column(table: string, header: string): number {
  return table.split("\n")[0]!.indexOf(header);
}

export function defineCliTests(target: CliTarget): void {
  describe(`workpool CLI: ${target.name}`, () => {
    const live: { dispose(): Promise<void> }[] = [];
    afterEach(async () => {
      for (const l of live.splice(0)) await l.dispose();
    });
    const fresh = async (): Promise<CliStore> => {
      const s = await target.create();
      live.push(s);
      return s;
    };

    test("read commands refuse a database without workpool's schema (3) and create nothing; migrate creates it", async () => {
      const absent = await target.absent();
      live.push(absent);
      const refused = await runCli([...absent.args, "pools"]);
      expectExit(refused, 3);
      expect(refused.stderr).toMatch(/workpool migrate/);
      expect(await absent.exists()).toBe(false);
      const migrated = await runCli([...absent.args, "migrate"]);
      expectExit(migrated, 0);
      expect(migrated.stdout).toMatch(/^migrated .* from version 0 to \d+\n$/);
      expect((await runCli([...absent.args, "migrate", "--json"])).stdout).toMatch(/"from": (\d+),\s+"to": \1/);
      const empty = await runCli([...absent.args, "pools"]);
      expectExit(empty, 0);
      expect(empty.stdout).toBe("no pools in this store\n");
    });

    test("pools, stats, ls and show print aligned tables without colour off a terminal, and JSON with --json", async () => {
      const s = await fresh();
      const ids = await populate(s.store);
      const pools = await runCli([...s.args, "pools"]);
      expectExit(pools, 0);
      const [header, row] = pools.stdout.trimEnd().split("\n");
      expect(header).toMatch(/^POOL {3,}LIMIT {3,}PENDING {3,}RETRYING {3,}RUNNING {3,}SUCCESS {3,}FAILED {3,}CANCELED {3,}OLDEST DUE/);
      expect(row).toMatch(/^mail {3,}10 {3,}1 {3,}1 {3,}0 {3,}2 {3,}1 {3,}0 {3,}- {3,}4 {3,}3$/);
      for (const h of ["PENDING", "FAILED", "STARTED/MIN"]) expect(row![column(pools.stdout, h)]).toMatch(/\d/);
      expect(pools.stdout).not.toContain("\u001b[");
      const json = JSON.parse((await runCli([...s.args, "pools", "--json"])).stdout) as { name: string; counts: object }[];
      expect(json).toMatchObject([{ name: "mail", counts: { pending: 1, retrying: 1, running: 0, success: 2, failed: 1, canceled: 0 } }]);

      const stats = await runCli([...s.args, "stats", "mail"]);
      expectExit(stats, 0);
      expect(stats.stdout).toMatch(/^Pool {8,}mail\nLimit {3,}10\nPending {3,}1\nRetrying {3,}1\n/);
      expect(stats.stdout).toMatch(/Finished {3,}2 success, 1 failed, 0 canceled/);
      expect(stats.stdout).toMatch(/Last minute {3,}4 started, 3 finished, mean wait \S+/);
      expect(JSON.parse((await runCli([...s.args, "stats", "mail", "--json"])).stdout)).toMatchObject({ name: "mail" });
      expectExit(await runCli([...s.args, "stats", "nope"]), 3);

      const ls = await runCli([...s.args, "ls", "mail"]);
      expectExit(ls, 0);
      const lines = ls.stdout.trimEnd().split("\n");
      expect(lines[0]).toMatch(/^ID {3,}HANDLER {3,}NAME {3,}STATE {3,}ATTEMPTS {3,}ENQUEUED {3,}STARTED {3,}FINISHED$/);
      expect(lines.slice(1).map((l) => l.split(/ {3,}/)[0])).toEqual([ids.pending, ids.retrying, ids.failed, ids.ok2, ids.ok1]);
      expect(lines[3]).toMatch(/bounce {3,}- {3,}failed {3,}1 {3,}(now|\d+ (ms|s) ago)/);
      expect(lines[5]).toMatch(/send {3,}welcome {3,}success/);
      expect(lines[2]).toMatch(/flaky .* retrying/);
      const failedOnly = JSON.parse((await runCli([...s.args, "ls", "mail", "--state", "failed", "--json"])).stdout) as {
        items: { id: string }[];
        cursor: null;
      };
      expect(failedOnly).toMatchObject({ items: [{ id: ids.failed }], cursor: null });
      const byKey = JSON.parse((await runCli([...s.args, "ls", "mail", "--key", "tenant-7", "--json"])).stdout) as {
        items: { id: string }[];
      };
      expect(byKey.items.map((i) => i.id)).toEqual([ids.pending]);
      const page = await runCli([...s.args, "ls", "mail", "--limit", "2"]);
      const cursor = /--cursor (\S+)/.exec(page.stdout)![1]!;
      expect(cursor).toBe(ids.retrying);
      const next = await runCli([...s.args, "ls", "mail", "--limit", "2", "--cursor", cursor, "--json"]);
      expect((JSON.parse(next.stdout) as { items: { id: string }[] }).items.map((i) => i.id)).toEqual([ids.failed, ids.ok2]);
      expectExit(await runCli([...s.args, "ls", "nope"]), 3);
      expectExit(await runCli([...s.args, "ls", "mail", "--state", "broken"]), 2);
      expectExit(await runCli([...s.args, "ls", "mail", "--limit", "501"]), 2);

      const show = await runCli([...s.args, "show", ids.failed]);
      expectExit(show, 0);
      expect(show.stdout).toMatch(/^ID {9,}\S+\nPool {7,}mail\nHandler {4,}bounce \(action\)/);
      expect(show.stdout).toMatch(/Result {3,}failed: boom: mailbox does not exist/);
      expect(show.stdout).toMatch(
        /ATTEMPT {3,}OUTCOME {3,}STARTED {3,}TOOK {3,}ERROR\n1 {3,}failed .* TypeError: boom: mailbox does not exist/,
      );
      expect(show.stdout).not.toContain("    at ");
      expect((await runCli([...s.args, "show", ids.failed, "--stack"])).stdout).toMatch(
        /attempt 1\nTypeError: boom: mailbox does not exist\n {4}at /,
      );
      const detail = JSON.parse((await runCli([...s.args, "show", ids.failed, "--json"])).stdout) as {
        attemptHistory: { error: { name: string; stack: string } }[];
      };
      expect(detail.attemptHistory[0]!.error).toMatchObject({ name: "TypeError" });
      expect(detail.attemptHistory[0]!.error.stack).toContain("boom");
      const pendingShow = await runCli([...s.args, "show", ids.pending]);
      expect(pendingShow.stdout).toMatch(/\nLog level {3,}DEBUG\n/);
      expect(show.stdout).not.toContain("Log level");
      expectExit(await runCli([...s.args, "show", "00000000000000000000000000"]), 3);
      expectExit(await runCli([...s.args, "show", "not-an-id"]), 2);
    });

    test("cancel, retry, purge and cancel-all: what they print and how they exit", async () => {
      const s = await fresh();
      const ids = await populate(s.store);
      const cancel = await runCli([...s.args, "cancel", ids.pending, ids.ok1]);
      expectExit(cancel, 4);
      expect(cancel.stdout).toBe(`${ids.pending}   canceled\n${ids.ok1}   already finished\n`);
      expectExit(await runCli([...s.args, "cancel", "00000000000000000000000000"]), 3);

      const retry = await runCli([...s.args, "retry", ids.failed, "--json"]);
      expectExit(retry, 0);
      const [{ newId }] = JSON.parse(retry.stdout) as [{ newId: string }];
      expect(newId).toMatch(/^[0-9A-Z]{26}$/);
      const retried = await runCli([...s.args, "retry", ids.pending]);
      expect(retried.stdout).toMatch(/^\S+ {3}retried as \S+\n$/);
      const refused = await runCli([...s.args, "retry", ids.ok1]);
      expectExit(refused, 4);
      expect(refused.stdout).toMatch(/not retried: .*finished with success/);

      expectExit(await runCli([...s.args, "purge", "mail"]), 2);
      expectExit(await runCli([...s.args, "purge", "mail", "--finished", "--pending"]), 2);
      expectExit(await runCli([...s.args, "purge", "mail", "--finished", "--before", "soon"]), 2);
      expect((await runCli([...s.args, "purge", "mail", "--finished", "--before", "7d"])).stdout).toBe(
        'purged 0 finished work from pool "mail"\n',
      );
      const purge = await runCli([...s.args, "purge", "mail", "--finished"]);
      expectExit(purge, 0);
      expect(purge.stdout).toBe('purged 4 finished work from pool "mail"\n');
      expectExit(await runCli([...s.args, "purge", "nope", "--finished"]), 3);

      const all = await runCli([...s.args, "cancel-all", "mail", "--yes", "--json"]);
      expectExit(all, 0);
      expect(JSON.parse(all.stdout)).toEqual({ pool: "mail", canceled: 3 });
      expect(JSON.parse((await runCli([...s.args, "pools", "--json"])).stdout)).toMatchObject([
        { counts: { pending: 0, retrying: 0, canceled: 3 } },
      ]);
    });

    test("pause, resume and set-parallelism change the limit every process obeys", async () => {
      const s = await fresh();
      await populate(s.store);
      const pause = await runCli([...s.args, "pause", "mail"]);
      expectExit(pause, 0);
      expect(pause.stdout).toBe('paused pool "mail" (resume restores 10)\n');
      expect((await runCli([...s.args, "pools"])).stdout).toMatch(/\nmail {3,}paused \(10\) {3,}/);
      expect((await runCli([...s.args, "pause", "mail"])).stdout).toBe('pool "mail" is already paused\n');
      expect((await runCli([...s.args, "resume", "mail"])).stdout).toBe('resumed pool "mail" at 10\n');
      expectExit(await runCli([...s.args, "resume", "mail"]), 4);
      const set = await runCli([...s.args, "set-parallelism", "mail", "3", "--json"]);
      expect(JSON.parse(set.stdout)).toEqual({ pool: "mail", maxParallelism: 3 });
      expectExit(await runCli([...s.args, "set-parallelism", "mail", "three"]), 2);
      expectExit(await runCli([...s.args, "set-parallelism", "mail", "10001"]), 2);
      expectExit(await runCli([...s.args, "pause", "nope"]), 3);
      expect(JSON.parse((await runCli([...s.args, "stats", "mail", "--json"])).stdout)).toMatchObject({
        maxParallelism: 3,
        pausedFrom: null,
      });
    });

    test("metrics prints the exposition; --serve answers GET /metrics until SIGTERM", async () => {
      const s = await fresh();
      await populate(s.store);
      const printed = await runCli([...s.args, "metrics"]);
      expectExit(printed, 0);
      expect(parseExposition(printed.stdout).samples.get('workpool_pending{pool="mail"}')).toBe(1);
      // Loopback unless --host says otherwise.
      const server = startCli([...s.args, "metrics", "--serve", "--port", "0"]);
      await server.until((_out, err) => /serving Prometheus metrics on http:\/\/\S+\/metrics/.test(err));
      expect(server.stderr()).toMatch(/http:\/\/127\.0\.0\.1:\d+\/metrics/);
      const url = /(http:\/\/\S+\/metrics)/.exec(server.stderr())![1]!;
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
      const { samples, types } = parseExposition(await res.text());
      expect(samples.get('workpool_retrying{pool="mail"}')).toBe(1);
      expect(samples.get('workpool_max_parallelism{pool="mail"}')).toBe(10);
      expect(samples.get("workpool_store_up")).toBe(1);
      expect(types.get("workpool_oldest_pending_age_seconds")).toBe("gauge");
      expect((await fetch(url.replace("/metrics", "/other"))).status).toBe(404);
      server.proc.kill("SIGTERM");
      expect(await server.exited).toBe(0);
    });

    test("dashboard serves on loopback and prints its address; another host without a token is refused", async () => {
      const s = await fresh();
      await populate(s.store);
      const refused = await runCli([...s.args, "dashboard", "--host", "0.0.0.0", "--port", "0"]);
      expectExit(refused, 2);
      expect(refused.stderr).toContain("refusing to serve the dashboard on 0.0.0.0 without auth");
      const server = startCli([...s.args, "dashboard", "--port", "0"]);
      await server.until((out) => /workpool dashboard on http:\/\/127\.0\.0\.1:\d+\//.test(out));
      const url = /(http:\/\/\S+\/)/.exec(server.stdout())![1]!;
      expect(await (await fetch(url)).text()).toContain('<div id="app">');
      const pools = (await (await fetch(`${url}api/pools`)).json()) as { pools: { name: string }[] };
      expect(pools.pools.map((p) => p.name)).toEqual(["mail"]);
      server.proc.kill("SIGTERM");
      expect(await server.exited).toBe(0);

      const token = "a-token-for-the-cli-test-0123";
      const exposed = startCli([...s.args, "dashboard", "--host", "0.0.0.0", "--port", "0", "--read-only"], {
        WORKPOOL_DASHBOARD_TOKEN: token,
      });
      await exposed.until((out) => out.includes("?token=<WORKPOOL_DASHBOARD_TOKEN>"));
      const port = /:(\d+)\//.exec(exposed.stdout())![1]!;
      expect((await fetch(`http://127.0.0.1:${port}/api/pools`)).status).toBe(401);
      const session = await fetch(`http://127.0.0.1:${port}/api/session`, { headers: { authorization: `Bearer ${token}` } });
      expect(await session.json()).toMatchObject({ readOnly: true });
      exposed.proc.kill("SIGTERM");
      expect(await exposed.exited).toBe(0);
    });

    test("stats --watch refreshes until interrupted, then exits 0", async () => {
      const s = await fresh();
      await populate(s.store);
      const watch = startCli([...s.args, "stats", "mail", "--watch", "--interval", "1"]);
      await watch.until((out) => out.split("Pool ").length > 2);
      watch.proc.kill("SIGINT");
      expect(await watch.exited).toBe(0);
      expect(watch.stdout()).toMatch(/\(every 1 s; Ctrl-C to stop\)\nPool {8,}mail/);
    });

    test("the store comes from --db, WORKPOOL_DB or DATABASE_URL; with none, a usage error (2)", async () => {
      const s = await fresh();
      await populate(s.store);
      const viaEnv = await runCli([...s.env.args, "pools"], s.env.vars);
      expectExit(viaEnv, 0);
      expect(viaEnv.stdout).toMatch(/\nmail /);
      const none = await runCli(["pools"]);
      expectExit(none, 2);
      expect(none.stderr).toMatch(/no database: pass --db/);
      expectExit(await runCli([...s.args, "no-such-command"]), 2);
      expectExit(await runCli([...s.args, "pools", "--no-such-option"]), 2);
      const help = await runCli(["--help"]);
      expectExit(help, 0);
      expect(help.stdout).toMatch(/Exit codes: 0 done/);
    });
  });
}
