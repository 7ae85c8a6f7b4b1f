/**
 * The `workpool` CLI, run as a child process (the built bin) against a real store: the
 * output of each command, --json, and the exit codes. Each store's *.test.ts calls
 * defineCliTests with its target.
 */
import { afterEach, describe, expect, test } from "vitest";
import { parseExposition } from "../helpers/prometheus.js";
import { runCli, startCli } from "./run.js";
import { defineCliActingTests } from "./acting.js";
import { defineCliRetryAllTests } from "./retry-all.js";
import { column, expectExit, populate, useStores, type CliTarget } from "./target.js";
import { defineTerminalSafetyTests } from "./terminal-safety.js";
import { defineShowLogsTests } from "./show-logs.js";
import { defineCliWorkflowTests } from "./workflows.js";

export type { CliStore, CliTarget } from "./target.js";

export function defineCliTests(target: CliTarget): void {
  defineTerminalSafetyTests(target);
  defineCliActingTests(target);
  defineShowLogsTests(target);
  defineCliWorkflowTests(target);
  defineCliRetryAllTests(target);
  describe(`workpool CLI: ${target.name}`, () => {
    const fresh = useStores(target);
    const live: { dispose(): Promise<void> }[] = [];
    afterEach(async () => {
      for (const l of live.splice(0)) await l.dispose();
    });

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
      expect(header).toMatch(
        /^POOL {3,}LIMIT {3,}KEY LIMIT {3,}RATE {3,}KEY RATE {3,}PENDING {3,}RETRYING {3,}RUNNING {3,}SUCCESS {3,}FAILED {3,}CANCELED {3,}OLDEST DUE/,
      );
      expect(row).toMatch(/^mail {3,}10 {3,}2 {3,}100\/1 min {3,}5\/1 s {3,}1 {3,}1 {3,}0 {3,}2 {3,}1 {3,}0 {3,}- {3,}4 {3,}3$/);
      for (const h of ["PENDING", "FAILED", "STARTED/MIN"]) expect(row![column(pools.stdout, h)]).toMatch(/\d/);
      expect(pools.stdout).not.toContain("\u001b[");
      const json = JSON.parse((await runCli([...s.args, "pools", "--json"])).stdout) as { name: string; counts: object }[];
      expect(json).toMatchObject([{ name: "mail", counts: { pending: 1, retrying: 1, running: 0, success: 2, failed: 1, canceled: 0 } }]);

      const stats = await runCli([...s.args, "stats", "mail"]);
      expectExit(stats, 0);
      expect(stats.stdout).toMatch(
        /^Pool {3,}mail\nLimit {3,}10\nKey limit {3,}2\nRate limit {3,}100\/1 min\nKey rate limit {3,}5\/1 s\nPending {3,}1\nRetrying {3,}1\n/,
      );
      expect(stats.stdout).toMatch(/Finished {3,}2 success, 1 failed, 0 canceled/);
      expect(stats.stdout).toMatch(/Last minute {3,}4 started, 3 finished, mean wait \S+/);
      expect(JSON.parse((await runCli([...s.args, "stats", "mail", "--json"])).stdout)).toMatchObject({ name: "mail" });
      expectExit(await runCli([...s.args, "stats", "nope"]), 3);

      const ls = await runCli([...s.args, "ls", "mail"]);
      expectExit(ls, 0);
      const lines = ls.stdout.trimEnd().split("\n");
      expect(lines[0]).toMatch(
        /^ID {3,}HANDLER {3,}NAME {3,}KEY {3,}PRIORITY {3,}STATE {3,}ATTEMPTS {3,}ENQUEUED {3,}STARTED {3,}FINISHED$/,
      );
      expect(lines.slice(1).map((l) => l.split(/ {3,}/)[0])).toEqual([ids.pending, ids.retrying, ids.failed, ids.ok2, ids.ok1]);
      expect(lines[1]).toMatch(/send {3,}- {3,}tenant-7 {3,}5 {3,}pending/);
      expect(lines[3]).toMatch(/bounce {3,}- {3,}- {3,}0 {3,}failed {3,}1 {3,}(now|\d+ (ms|s) ago)/);
      expect(lines[5]).toMatch(/send {3,}welcome {3,}- {3,}0 {3,}success/);
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
      // The line under a page repeats the command, every option kept (the store's included), for the next page.
      const page = await runCli([...s.args, "ls", "mail", "--limit", "2", "--handler", "send"]);
      const hint = /\nmore: (.*)\n$/.exec(page.stdout)![1]!;
      expect(hint).toBe(`workpool ${s.args.join(" ")} ls mail --handler send --limit 2 --cursor ${ids.ok2}`);
      const next = await runCli([...hint.split(" ").slice(1), "--json"]);
      expect((JSON.parse(next.stdout) as { items: { id: string }[] }).items.map((i) => i.id)).toEqual([ids.ok1]);
      const viaEnv = await runCli([...s.env.args, "ls", "mail", "--limit", "2"], s.env.vars);
      expect(viaEnv.stdout).toContain(
        `\nmore: ${["workpool", ...s.env.args, "ls", "mail", "--limit", "2", "--cursor", ids.retrying].join(" ")}\n`,
      );
      expectExit(await runCli([...s.args, "ls", "nope"]), 3);
      expectExit(await runCli([...s.args, "ls", "mail", "--state", "broken"]), 2);
      expectExit(await runCli([...s.args, "ls", "mail", "--limit", "501"]), 2);

      const show = await runCli([...s.args, "show", ids.failed]);
      expectExit(show, 0);
      expect(show.stdout).toMatch(/^ID {9,}\S+\nPool {7,}mail\nHandler {4,}bounce \(action\)/);
      expect(show.stdout).toMatch(/\nKey {3,}-\nPriority {3,}0\n/);
      expect(show.stdout).toMatch(/Result {3,}failed: boom: mailbox does not exist\nError data {3,}\{"smtp":550\}\nRetried as {3,}-\n/);
      expect(show.stdout).toMatch(
        /ATTEMPT {3,}OUTCOME {3,}STARTED {3,}TOOK {3,}ERROR\n1 {3,}failed .* WorkError: boom: mailbox does not exist/,
      );
      expect(show.stdout).not.toContain("    at ");
      expect((await runCli([...s.args, "show", ids.failed, "--stack"])).stdout).toMatch(
        /attempt 1\nWorkError: boom: mailbox does not exist\n {4}at /,
      );
      const detail = JSON.parse((await runCli([...s.args, "show", ids.failed, "--json"])).stdout) as {
        result: unknown;
        retriedAs: null;
        attemptHistory: { error: { name: string; stack: string } }[];
      };
      expect(detail).toMatchObject({ result: { kind: "failed", errorData: { smtp: 550 } }, retriedAs: null });
      expect(detail.attemptHistory[0]!.error).toMatchObject({ name: "WorkError" });
      expect(detail.attemptHistory[0]!.error.stack).toContain("boom");
      const pendingShow = await runCli([...s.args, "show", ids.pending]);
      expect(pendingShow.stdout).toMatch(/\nKey {3,}tenant-7\nPriority {3,}5\n/);
      expect(pendingShow.stdout).toMatch(/\nLog level {3,}DEBUG\n/);
      expect(pendingShow.stdout).not.toMatch(/Error data|Retried as/);
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
