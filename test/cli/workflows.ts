/**
 * `workpool workflows …` against a real store with runs made by WorkflowManagers in this
 * process (the "workers", stepped with runOnce): ls and show print tables and JSON with
 * stored text escaped; cancel, restart, fork, skip and send-event act through the admin API
 * and a worker carries the run on; exit codes as the other commands; bad flags exit 2
 * before anything is done.
 */
import { describe, expect, test } from "vitest";
import { ManualClock, Workpool, type Store } from "../../src/index.js";
import { WorkflowManager } from "../../src/workflow/index.js";
import { quietLogger } from "../helpers/common.js";
import { runCli, type CliRun } from "./run.js";
import { expectExit, useStores, type CliStore, type CliTarget } from "./target.js";
import { HOSTILE } from "./terminal-safety.js";

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

/** A process with the code of one deploy: pool "orders" and its workflows. `withB`: flow calls b. */
function deploy(store: Store<unknown>, clock: ManualClock, withB: boolean) {
  const pool = new Workpool(store, { name: "orders", logger: quietLogger, clock, maxParallelism: 20 });
  const wf = new WorkflowManager(pool);
  const [a, b, c] = ["a", "b", "c"].map((n) => pool.defineAction(n, () => n));
  const echo = pool.defineAction("echo", (_c, text: string) => text);
  wf.define("flow", async (step) => {
    let out = await step.runAction(a!, null);
    if (withB) out += await step.runAction(b!, null);
    await step.awaitEvent("go");
    return out + (await step.runAction(c!, null));
  });
  const child = wf.define("child", async (step) => {
    await step.awaitEvent("never");
  });
  wf.define("parent", async (step) => {
    await step.runAction(echo, HOSTILE);
    const ev = await step.awaitEvent("approve");
    await step.runWorkflow(child, null);
    return ev;
  });
  const drain = async (): Promise<void> => {
    // The CLI writes with the system clock: the worker's clock catches up with it first.
    clock.advance(Math.max(0, Date.now() - clock.now()));
    for (let idle = 0; idle < 2;) idle = (await pool.runOnce()).claimed === 0 ? idle + 1 : 0;
  };
  return { pool, wf, drain };
}

/** Runs: done-1 (success "abc"), blocked-1 (a deploy without b blocks it at entry 1), parent-1 (waits, with a child and an untaken event). */
async function workflowRuns(s: CliStore) {
  const clock = new ManualClock(Date.now());
  const v1 = deploy(s.store, clock, true);
  const handle = (name: string) => ({ kind: "workflow", name, pool: "orders" }) as never;
  await v1.wf.start(handle("flow"), null, { workflowId: "done-1" });
  await v1.wf.start(handle("flow"), null, { workflowId: "blocked-1" });
  await v1.wf.start(handle("parent"), null, { workflowId: "parent-1" });
  await v1.drain();
  await v1.wf.sendEvent("done-1", "go", null);
  await v1.wf.sendEvent("parent-1", "approve", { ok: true });
  await v1.wf.sendEvent("parent-1", "note", HOSTILE);
  await v1.drain();
  const v2 = deploy(s.store, clock, false);
  await v2.wf.sendEvent("blocked-1", "go", null);
  await v2.drain();
  return v2;
}

function expectSafe(run: CliRun): void {
  expect(CONTROL.exec(run.stdout), run.stdout).toBeNull();
  expect(CONTROL.exec(run.stderr), run.stderr).toBeNull();
}

/** A run as `workflows show --json` gives it. */
async function shown(s: CliStore, id: string): Promise<{ run: { state: string; result?: unknown; steps: number }; events: unknown[] }> {
  const run = await runCli([...s.args, "workflows", "show", id, "--json"]);
  expectExit(run, 0);
  return JSON.parse(run.stdout) as { run: { state: string; result?: unknown; steps: number }; events: unknown[] };
}

export function defineCliWorkflowTests(target: CliTarget): void {
  describe(`workpool CLI: ${target.name}: workflows`, () => {
    const fresh = useStores(target);

    test("workflows ls and show print runs, journals, child runs and untaken events, escaped; --json; paging hint", async () => {
      const s = await fresh();
      await workflowRuns(s);
      const ls = await runCli([...s.args, "workflows", "ls"]);
      expectExit(ls, 0);
      const lines = ls.stdout.trimEnd().split("\n");
      expect(lines[0]).toMatch(/^ID {3,}POOL {3,}NAME {3,}VERSION {3,}STATE {3,}STEPS {3,}CREATED {3,}FINISHED {3,}PARENT$/);
      const row = (id: string) => lines.find((l) => l.startsWith(`${id} `)) ?? "";
      expect(row("done-1")).toMatch(/^done-1 {3,}orders {3,}flow {3,}- {3,}success {3,}4 /);
      expect(row("blocked-1")).toMatch(/ {3,}blocked {3,}3 /);
      expect(row("parent-1")).toMatch(/ {3,}running {3,}3 /);
      expect(lines.filter((l) => / parent-1$/.test(l))).toHaveLength(1);
      const blocked = JSON.parse((await runCli([...s.args, "workflows", "ls", "--state", "blocked", "--json"])).stdout) as {
        items: { workflowId: string }[];
      };
      expect(blocked.items.map((r) => r.workflowId)).toEqual(["blocked-1"]);
      const page = await runCli([...s.args, "workflows", "ls", "--limit", "1", "--pool", "orders"]);
      expectExit(page, 0);
      const hint = /more: (workpool .*)\n$/.exec(page.stdout)![1]!;
      expect(hint).toMatch(/^workpool --db \S+ (--schema \S+ )?workflows ls --pool orders --limit 1 --cursor \S+$/);
      const next = await runCli([...s.args, ...hint.split(" ").slice(hint.split(" ").indexOf("workflows"))]);
      expectExit(next, 0);
      expect(next.stdout.split("\n")[1]).not.toBe(page.stdout.split("\n")[1]);

      const show = await runCli([...s.args, "workflows", "show", "blocked-1"]);
      expectExit(show, 0);
      expect(show.stdout).toMatch(/^State {3,}blocked$/m);
      expect(show.stdout).toContain('entry 1: the code calls event "go", the journal has action "b"');
      expect(show.stdout).toMatch(/^N {3,}KIND {3,}NAME {3,}STATE {3,}STARTED {3,}FINISHED {3,}ARGS {3,}OUTCOME {3,}WORK \/ CHILD$/m);
      expect(show.stdout).toMatch(/^1 {3,}action {3,}b {3,}success /m);

      const parent = await runCli([...s.args, "workflows", "show", "parent-1"]);
      expectExit(parent, 0);
      expectSafe(parent);
      // The journal entry's args and result, and the untaken event's payload, escaped in place.
      // JSON values keep JSON's escapes; C1 controls are escaped as JSON too.
      const asJson = JSON.stringify(HOSTILE).replace("\u009b", "\\u009b");
      expect(parent.stdout.split("\n").find((l) => l.startsWith("0 "))).toContain(`${asJson}   ${asJson}`);
      expect(parent.stdout).toContain("Child runs");
      expect(parent.stdout).toMatch(/Events not taken yet\nSEQ {3,}NAME {3,}SENT {3,}PAYLOAD\n2 {3,}note /);
      expect(parent.stdout).not.toMatch(/^1 {3,}approve/m);
      const json = await shown(s, "parent-1");
      expect(json.events).toContainEqual(expect.objectContaining({ name: "note", payload: HOSTILE, consumedStep: null }));

      expectExit(await runCli([...s.args, "workflows", "show", "no-such-run"]), 3);
      expectExit(await runCli([...s.args, "workflows", "ls", "--state", "sleeping"]), 2);
      expectExit(await runCli([...s.args, "workflows", "ls", "--created-after", "yesterday"]), 2);
    });

    test("workflows versions lists the versions of unfinished runs, those no live process defines first; --json; a bad pool exits 2", async () => {
      const s = await fresh();
      await workflowRuns(s);
      const json = await runCli([...s.args, "workflows", "versions", "--json"]);
      expectExit(json, 0);
      const rows = JSON.parse(json.stdout) as { pool: string; name: string; version: string | null; unfinishedRuns: number }[];
      const unfinished = Object.fromEntries(rows.map((r) => [`${r.pool}/${r.name}/${r.version}`, r.unfinishedRuns]));
      expect(unfinished).toMatchObject({ "orders/flow/null": 1, "orders/parent/null": 1, "orders/child/null": 1 });
      const text = await runCli([...s.args, "workflows", "versions", "--pool", "orders"]);
      expectExit(text, 0);
      expect(text.stdout.split("\n")[0]).toMatch(/^POOL {3,}WORKFLOW {3,}VERSION {3,}PINNED {3,}UNFINISHED RUNS {3,}LIVE PROCESSES$/);
      expect(text.stdout).toMatch(/^orders {3,}flow {3,}- {3,}no {3,}1 /m);
      expectExit(await runCli([...s.args, "workflows", "versions", "--pool", "bad pool!"]), 2);
    });

    test("cancel, restart, fork, skip and send-event act through the admin API; a worker carries the runs on", async () => {
      const s = await fresh();
      const worker = await workflowRuns(s);
      const skipped = await runCli([...s.args, "workflows", "skip", "blocked-1", "--yes"]);
      expectExit(skipped, 0);
      expect(skipped.stdout).toBe("blocked-1   skipped entry 1\n");
      await worker.drain();
      expect((await shown(s, "blocked-1")).run).toMatchObject({ state: "success", result: "ac", steps: 3 });

      // The fork keeps entry 0 (a) and runs on with the code as it is now (no b), taking its copy of the event.
      const forked = await runCli([...s.args, "workflows", "fork", "done-1", "--from", "1", "--workflow-id", "fork-1", "--json"]);
      expectExit(forked, 0);
      expect(JSON.parse(forked.stdout)).toEqual({ workflowId: "done-1", outcome: "forked", from: 1, forkId: "fork-1" });
      await worker.drain();
      expect((await shown(s, "fork-1")).run).toMatchObject({ state: "success", result: "ac", steps: 3 });
      expect((await shown(s, "done-1")).run).toMatchObject({ state: "success", result: "abc", steps: 4 });

      const sent = await runCli([...s.args, "workflows", "send-event", "parent-1", "note", "--payload", '{"n":2}']);
      expectExit(sent, 0);
      expect(sent.stdout).toBe('parent-1   sent event "note"\n');
      expect((await shown(s, "parent-1")).events).toHaveLength(3);

      const canceled = await runCli([...s.args, "workflows", "cancel", "parent-1", "--yes"]);
      expectExit(canceled, 0);
      await worker.drain();
      expect((await shown(s, "parent-1")).run).toMatchObject({ state: "canceled" });
      expectExit(await runCli([...s.args, "workflows", "cancel", "parent-1"]), 4);

      // A canceled run restarted from entry 1: the approval is taken again, a new child starts.
      const restarted = await runCli([...s.args, "workflows", "restart", "parent-1", "--from", "1", "--json"]);
      expectExit(restarted, 0);
      expect(JSON.parse(restarted.stdout)).toEqual({ workflowId: "parent-1", outcome: "restarted", from: 1 });
      await worker.drain();
      expect((await shown(s, "parent-1")).run).toMatchObject({ state: "running", steps: 3 });
    });

    test("exit codes: unknown run 3, an action that does not apply 4, bad flags 2 with nothing done", async () => {
      const s = await fresh();
      await workflowRuns(s);
      const before = await shown(s, "parent-1");
      const cases: [string[], number, RegExp][] = [
        [["skip", "no-such-run"], 3, /no workflow run with id no-such-run/],
        [["restart", "no-such-run", "--from", "0"], 3, /no workflow run/],
        [["send-event", "no-such-run", "go"], 3, /no workflow run/],
        [["skip", "done-1"], 4, /done-1 succeeded; only a blocked run can skip/],
        [["restart", "done-1", "--from", "0"], 4, /succeeded; only failed, canceled or blocked/],
        [["send-event", "done-1", "go"], 4, /has finished \(success\)/],
        [["restart", "parent-1", "--from", "x"], 2, /--from: expected a whole number/],
        [["restart", "parent-1"], 2, /--from/],
        [["fork", "done-1", "--from", "9"], 2, /--from: must be an integer from 0 to 4/],
        [["fork", "done-1", "--from", "1", "--workflow-id", "bad id"], 2, /--workflow-id/],
        [["fork", "done-1", "--from", "1", "--workflow-id", "done-1"], 2, /--workflow-id: a run with id "done-1" exists/],
        [["send-event", "parent-1", "note", "--payload", "{not json"], 2, /--payload: not JSON/],
        [["send-event", "parent-1", "bad name!"], 2, /<name>:/],
        [["cancel", "bad id"], 2, /<id>:/],
        [["skip", "parent-1", "--bogus"], 2, /unknown option '--bogus'/],
      ];
      for (const [args, code, message] of cases) {
        const run = await runCli([...s.args, "workflows", ...args]);
        expect({ args, code: run.code }).toEqual({ args, code });
        expect(run.stderr).toMatch(message);
        expect(run.stdout).toBe("");
      }
      expect(await shown(s, "parent-1")).toEqual(before);
      const ls = JSON.parse((await runCli([...s.args, "workflows", "ls", "--json"])).stdout) as { items: unknown[] };
      expect(ls.items).toHaveLength(4);
    });
  });
}
