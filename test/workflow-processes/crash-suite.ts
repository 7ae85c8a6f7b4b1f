/**
 * Crash anywhere, with real processes: worker processes (test/fixtures/workflow-child.mjs)
 * drive workflow runs while the test kills one with SIGKILL at random moments, several
 * times (as an advance runs the workflow function, as an action step runs, inside a
 * mutation step's transaction), starting a replacement each time. Afterwards every run
 * has the result it would have had without the kills, each mutation step's app-table row
 * is there exactly once, and each run's onComplete row exactly once. The kill moments vary
 * from run to run; the assertions do not depend on them.
 */
import { afterEach, expect, test } from "vitest";
import { Workpool } from "../../src/index.js";
import { WorkflowManager } from "../../src/workflow/index.js";
import { spawnChild, type Child } from "../helpers/child.js";
import { quietLogger as quiet } from "../helpers/common.js";

const RUNS = 40;
const KILLS = 6;
const WORKERS = 2;
/** Longest the runs may take to finish after the last kill (normally a few seconds). */
const FINISH_MS = 60_000;

/** What the test needs of a store: the store, the children's arguments, SQL for the app tables and checks. */
export interface CrashTarget<Tx> {
  name: string;
  open(): Promise<CrashStore<Tx>>;
}

export interface CrashStore<Tx> {
  store: ConstructorParameters<typeof Workpool<Tx>>[0];
  childArgs: string[];
  /** A table's name as SQL: an app table, or one of workpool's by its PostgreSQL name ("work", "workflow_runs", …). */
  table(name: string): string;
  exec(sql: string): Promise<void>;
  query<R>(sql: string): Promise<R[]>;
  dispose(): Promise<void>;
}

/** What run `n` returns, and the values its two mutation steps write: the workflow in workflow-child.mjs, computed here. */
export function expectedRun(n: number): { result: number; writes: [number, number][] } {
  const a = 2 * n;
  const b = 2 * (a + 1);
  const c = 2 * b;
  const d = 2 * (b + 1);
  return {
    result: a + b + c + d,
    writes: [
      [0, a],
      [1, c + d],
    ],
  };
}

interface Worker {
  child: Child;
  /** Resolves with the next stdout line matching `pattern` from now on, or null after `ms` or on exit. */
  next(pattern: RegExp, ms: number): Promise<string | null>;
  expectedExit: "SIGKILL" | 0 | null;
  exited: boolean;
}

function startWorker(args: string[], crashes: string[]): Worker {
  const child = spawnChild("workflow-child.mjs", args);
  const waiters: { pattern: RegExp; resolve: (l: string | null) => void }[] = [];
  let buf = "";
  child.proc.stdout!.on("data", (chunk: string) => {
    buf += chunk;
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      for (const w of waiters.filter((x) => x.pattern.test(line))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  const w: Worker = {
    child,
    expectedExit: null,
    exited: false,
    next(pattern, ms) {
      return new Promise((resolve) => {
        const finish = (l: string | null): void => {
          clearTimeout(timer);
          const at = waiters.indexOf(waiter);
          if (at >= 0) waiters.splice(at, 1);
          resolve(l);
        };
        const waiter = { pattern, resolve: finish };
        waiters.push(waiter);
        const timer = setTimeout(() => finish(null), ms);
        void child.exited.then(() => finish(null));
      });
    },
  };
  void child.exited.then((code) => {
    w.exited = true;
    if (code !== w.expectedExit) crashes.push(`worker exited with ${code}; stderr:\n${child.stderr().slice(-4000)}`);
  });
  return w;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The first of `workers` to print a line matching `pattern` within `ms`, with the line; null if none does. */
function firstToPrint(workers: Worker[], pattern: RegExp, ms: number): Promise<{ worker: Worker; line: string } | null> {
  return new Promise((resolve) => {
    let left = workers.length;
    if (left === 0) resolve(null);
    for (const worker of workers) {
      void worker.next(pattern, ms).then((line) => {
        if (line !== null) resolve({ worker, line });
        else if (--left === 0) resolve(null);
      });
    }
  });
}

/** Defines the crash test on one store. */
export function defineWorkflowCrashTest<Tx>(target: CrashTarget<Tx>): void {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  test(
    `${target.name}: runs end with their results, each mutation write and onComplete once, though workers are SIGKILLed ${KILLS} times`,
    {
      timeout: FINISH_MS + 60_000,
    },
    async () => {
      const s = await target.open();
      cleanups.push(() => s.dispose());
      const workers: Worker[] = [];
      cleanups.push(() => {
        for (const w of workers) if (!w.exited) w.child.proc.kill("SIGKILL");
      });
      const crashes: string[] = [];
      // No unique keys on purpose: a second write or a second onComplete shows up as a second row.
      await s.exec(`CREATE TABLE ${s.table("wf_writes")} (run_id TEXT NOT NULL, i INTEGER NOT NULL, v INTEGER NOT NULL)`);
      await s.exec(`CREATE TABLE ${s.table("wf_done")} (workflow_id TEXT NOT NULL, kind TEXT NOT NULL, result TEXT)`);

      // This process only starts the runs; the workers define the same workflow and handlers.
      const pool = new Workpool(s.store, { name: "wfcrash", maxParallelism: 6, logger: quiet });
      const wf = new WorkflowManager(pool);
      const done = pool.defineMutation("done", () => undefined);
      const flow = wf.define("flow", async (_step, _args: { n: number }): Promise<number> => {
        throw new Error("runs in the worker processes");
      });
      for (let i = 0; i < RUNS; i++) await wf.start(flow, { n: i + 1 }, { workflowId: `run-${i}`, onComplete: done });

      const spawn = async (): Promise<Worker> => {
        const w = startWorker(s.childArgs, crashes);
        workers.push(w);
        await w.child.waitForLine(/^ready$/);
        return w;
      };
      for (let i = 0; i < WORKERS; i++) await spawn();
      const alive = () => workers.filter((w) => !w.exited && w.expectedExit === null);

      // Each kill waits for a worker to begin an advance (A), an action step (S) or a
      // mutation's transaction (M), then kills it a random few ms into it (or, if none
      // begins one within 3 s, kills a random worker where it is).
      const kinds = [/^A /, /^S /, /^M /];
      const kills: { trigger: string; seen: boolean }[] = [];
      const t0 = Date.now();
      for (let k = 0; k < KILLS; k++) {
        await sleep(100 + Math.random() * 400);
        expect(crashes).toEqual([]);
        const candidates = alive();
        const hit = await firstToPrint(candidates, kinds[k % kinds.length]!, 3000);
        const victim = hit?.worker ?? candidates[Math.floor(Math.random() * candidates.length)]!;
        await sleep(Math.random() * 8);
        victim.expectedExit = "SIGKILL";
        victim.child.proc.kill("SIGKILL");
        await victim.child.exited;
        kills.push({ trigger: kinds[k % kinds.length]!.source[1]!, seen: hit !== null });
        await spawn();
      }

      const unfinished = async () =>
        Number(
          (
            await s.query<{ n: number }>(
              `SELECT count(*) AS n FROM ${s.table("workflow_runs")} WHERE state NOT IN ('success', 'failed', 'canceled')`,
            )
          )[0]!.n,
        );
      const deadline = Date.now() + FINISH_MS;
      while ((await unfinished()) > 0) {
        expect(crashes).toEqual([]);
        if (Date.now() > deadline) throw new Error(`runs still unfinished after ${FINISH_MS} ms: ${await unfinished()}`);
        await sleep(50);
      }
      const elapsedMs = Date.now() - t0;
      for (const w of alive()) {
        w.expectedExit = 0;
        w.child.proc.kill("SIGTERM");
      }
      await Promise.all(workers.map((w) => w.child.exited));
      expect(crashes).toEqual([]);

      const runs = await s.query<{ id: string; state: string; result: string }>(
        `SELECT id, state, result FROM ${s.table("workflow_runs")} ORDER BY id`,
      );
      expect(runs).toHaveLength(RUNS);
      const writes = await s.query<{ run_id: string; i: number; v: number }>(`SELECT run_id, i, v FROM ${s.table("wf_writes")}`);
      const dones = await s.query<{ workflow_id: string; kind: string; result: string }>(
        `SELECT workflow_id, kind, result FROM ${s.table("wf_done")}`,
      );
      for (let i = 0; i < RUNS; i++) {
        const id = `run-${i}`;
        const want = expectedRun(i + 1);
        const run = runs.find((r) => r.id === id);
        expect(run?.state, id).toBe("success");
        expect(JSON.parse(run!.result), id).toEqual({ kind: "success", returnValue: want.result });
        const mine = writes
          .filter((w) => w.run_id === id)
          .map((w) => [Number(w.i), Number(w.v)])
          .sort((x, y) => x[0]! - y[0]!);
        expect(mine, `${id}: its mutation steps' rows`).toEqual(want.writes);
        expect(
          dones.filter((d) => d.workflow_id === id),
          `${id}: its onComplete rows`,
        ).toEqual([{ workflow_id: id, kind: "success", result: String(want.result) }]);
      }
      expect(writes).toHaveLength(2 * RUNS);
      expect(dones).toHaveLength(RUNS);
      const open = await s.query<{ n: number }>(`SELECT count(*) AS n FROM ${s.table("workflow_steps")} WHERE state <> 'done'`);
      expect(Number(open[0]!.n)).toBe(0);

      const retried = await s.query<{ extra: number }>(`SELECT sum(attempt) - count(*) AS extra FROM ${s.table("work")}`);
      console.log(
        `${target.name} workflow crash figures:`,
        JSON.stringify({ runs: RUNS, elapsedMs, workersStarted: workers.length, kills, attemptsBeyondFirst: Number(retried[0]!.extra) }),
      );
    },
  );
}
