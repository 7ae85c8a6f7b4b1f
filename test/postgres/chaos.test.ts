/**
 * Chaos test (issue 3): four worker processes share one database while the test kills a
 * random worker with SIGKILL every 1-2 s (starting a new one each time) and restarts
 * PostgreSQL once. Afterwards every work has finished, every mutation committed exactly
 * once, every onComplete committed exactly once, and the attempts running at once, as
 * recorded by the handlers themselves, never exceeded maxParallelism.
 *
 * Short form by default; WORKPOOL_CHAOS_LONG=1 runs the long form. The restart uses
 * Debian's pg_ctlcluster; set WORKPOOL_PG_RESTART to a shell command to restart the
 * server some other way.
 */
import { execSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { expect, test } from "vitest";
import { Workpool } from "../../src/index.js";
import { spawnChild, type Child } from "../helpers/child.js";
import { adminQuery, DATABASE_URL, holdServerExclusive } from "./helpers.js";
import { quietLogger as quiet } from "../helpers/common.js";
import { openTestStore } from "../helpers/stores.js";

const LONG = process.env.WORKPOOL_CHAOS_LONG === "1";
const ACTIONS = LONG ? 16_000 : 800;
const MUTATIONS = LONG ? 4_000 : 200;
const MAX_PARALLELISM = 8;
const WORKERS = 4;
/** When the server restarts, counted from the first worker's start. */
const RESTART_AFTER_MS = LONG ? 20_000 : 4_000;
/** Longest the work may take to finish (the short form normally needs about 20 s). */
const DEADLINE_MS = LONG ? 30 * 60_000 : 120_000;

function restartCommand(): string {
  if (process.env.WORKPOOL_PG_RESTART) return process.env.WORKPOOL_PG_RESTART;
  if (!existsSync("/etc/postgresql")) {
    throw new Error("no Debian PostgreSQL cluster to restart: set WORKPOOL_PG_RESTART to a shell command that restarts the test server");
  }
  const versions = readdirSync("/etc/postgresql").sort((a, b) => Number(a) - Number(b));
  return `pg_ctlcluster --skip-systemctl-redirect ${versions[versions.length - 1]} main restart`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Worker {
  child: Child;
  pid: number;
  /** Set when the test kills or stops it on purpose. */
  expectedExit: "SIGKILL" | 0 | null;
  /** process.hrtime of the moment its exit was observed. */
  exitedAt: bigint | null;
}

/** Most attempts alive at one instant, from the handlers' start/end marks. */
function peakConcurrency(logDir: string, workers: Map<number, Worker>): { peak: number; attempts: number; cutByKill: number } {
  const events: { t: bigint; d: number }[] = [];
  let attempts = 0;
  let cutByKill = 0;
  for (const file of readdirSync(logDir)) {
    const pid = Number(file.replace(/\.log$/, ""));
    const open = new Map<string, bigint>();
    for (const line of readFileSync(join(logDir, file), "utf8").split("\n")) {
      if (!line) continue;
      const [what, id, attempt, ns] = line.split(" ");
      const key = `${id}:${attempt}`;
      if (what === "S") open.set(key, BigInt(ns!));
      else {
        const start = open.get(key);
        open.delete(key);
        if (start === undefined) continue;
        events.push({ t: start, d: +1 }, { t: BigInt(ns!), d: -1 });
        attempts++;
      }
    }
    // Attempts cut short by SIGKILL ran until the process died (at the latest when its exit was seen).
    const diedAt = workers.get(pid)?.exitedAt;
    if (open.size && diedAt == null) throw new Error(`worker ${pid} left attempts open without being killed`);
    for (const start of open.values()) {
      events.push({ t: start, d: +1 }, { t: diedAt!, d: -1 });
      attempts++;
      cutByKill++;
    }
  }
  // An attempt that ended before another started may share its timestamp: ends first.
  events.sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : a.d - b.d));
  let live = 0;
  let peak = 0;
  for (const e of events) {
    live += e.d;
    peak = Math.max(peak, live);
  }
  return { peak, attempts, cutByKill };
}

test(
  `chaos: ${WORKERS} workers, SIGKILL every 1-2 s, one PostgreSQL restart (${LONG ? "long" : "short"} form)`,
  { timeout: DEADLINE_MS + 30_000 },
  async () => {
    const restart = restartCommand();
    // Migrated only once this test holds the server alone (below).
    const t = await openTestStore("postgres", { prefix: "wp_chaos", connections: "own", migrate: false });
    const { schema, store } = t;
    const logDir = mkdtempSync(join(tmpdir(), "workpool-chaos-"));
    const retry = { maxAttempts: 50, initialBackoffMs: 20, base: 1.5 };
    const workers = new Map<number, Worker>();
    const crashes: string[] = [];
    const monitor = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    monitor.on("error", () => undefined);
    let releaseServer: (() => Promise<void>) | null = null;
    try {
      // Other test files using the server finish first, and wait until the restart (which
      // also ends this lock's session) is over.
      releaseServer = await holdServerExclusive();
      await store.migrate();
      await adminQuery(`CREATE TABLE "${schema}".app_counter (id INT PRIMARY KEY, n BIGINT NOT NULL)`);
      await adminQuery(`INSERT INTO "${schema}".app_counter VALUES (1, 0)`);
      // No unique key on purpose: a second onComplete for a work would show up as a second row.
      await adminQuery(`CREATE TABLE "${schema}".app_oncomplete (work_id TEXT NOT NULL, kind TEXT NOT NULL)`);

      const pool = new Workpool(store, { name: "chaos", maxParallelism: MAX_PARALLELISM, defaultRetryBehavior: retry, logger: quiet });
      const work = pool.defineAction("work", (_c, _a: { i: number; ms: number; fail: boolean }) => 0);
      const increment = pool.defineMutation("increment", () => undefined);
      const record = pool.defineOnComplete("record", () => undefined);
      const ids: string[] = [];
      let actionsQueued = 0;
      let mutationsQueued = 0;
      /** Enqueues a share of the mix: actions (10 % fail their first attempt) and mutations. */
      const enqueueShare = async (actions: number, mutations: number) => {
        for (let n = 0; n < actions; n += 500) {
          const args = Array.from({ length: Math.min(500, actions - n) }, (_, k) => {
            const i = actionsQueued + n + k;
            return { i, ms: 5 + ((i * 7919) % 36), fail: i % 10 === 0 };
          });
          ids.push(...(await pool.enqueueActionBatch(work, args, { retry: true, onComplete: record })));
        }
        actionsQueued += actions;
        for (let n = 0; n < mutations; n += 500) {
          ids.push(
            ...(await pool.enqueueMutationBatch(
              increment,
              Array.from({ length: Math.min(500, mutations - n) }, () => ({})),
              { onComplete: record },
            )),
          );
        }
        mutationsQueued += mutations;
      };
      await enqueueShare(ACTIONS / 2, MUTATIONS / 2);

      const spawnWorker = (): Worker => {
        const child = spawnChild("../postgres/fixtures/chaos-child.mjs", [schema, logDir, String(MAX_PARALLELISM)]);
        const w: Worker = { child, pid: child.proc.pid!, expectedExit: null, exitedAt: null };
        workers.set(w.pid, w);
        void child.exited.then((code) => {
          w.exitedAt = process.hrtime.bigint();
          if (code !== w.expectedExit) crashes.push(`worker ${w.pid} exited with ${code}; stderr:\n${child.stderr().slice(-4000)}`);
        });
        return w;
      };
      const alive = () => [...workers.values()].filter((w) => w.exitedAt === null && w.expectedExit === null);
      for (let i = 0; i < WORKERS; i++) spawnWorker();
      await Promise.all(alive().map((w) => w.child.waitForLine(/^ready$/)));
      const t0 = Date.now();

      const unfinished = async (): Promise<number | null> => {
        try {
          const { rows } = await monitor.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".work WHERE state <> 'finished'`);
          return rows[0]!.n;
        } catch {
          return null; // the server is restarting
        }
      };

      let kills = 0;
      let restartMs = -1;
      let nextKill = Date.now() + 1000 + Math.random() * 1000;
      let restarted = false;
      let secondShare = false;
      for (;;) {
        expect(crashes).toEqual([]);
        if (Date.now() - t0 > DEADLINE_MS) throw new Error(`work still unfinished after ${DEADLINE_MS} ms: ${await unfinished()}`);
        if (!secondShare && Date.now() - t0 > RESTART_AFTER_MS / 2) {
          // More work while the workers run (before the restart, so no enqueue has an unknown outcome).
          await enqueueShare(ACTIONS - ACTIONS / 2, MUTATIONS - MUTATIONS / 2);
          secondShare = true;
        }
        if (secondShare && !restarted && Date.now() - t0 > RESTART_AFTER_MS) {
          const before = Date.now();
          execSync(restart, { stdio: "ignore" });
          restartMs = Date.now() - before;
          restarted = true;
          await releaseServer();
        }
        if (Date.now() >= nextKill) {
          const candidates = alive();
          const victim = candidates[Math.floor(Math.random() * candidates.length)];
          if (victim) {
            victim.expectedExit = "SIGKILL";
            victim.child.proc.kill("SIGKILL");
            await victim.child.exited;
            kills++;
          }
          spawnWorker();
          nextKill = Date.now() + 1000 + Math.random() * 1000;
        }
        if (restarted && (await unfinished()) === 0) break;
        await sleep(100);
      }
      const elapsedMs = Date.now() - t0;

      // Graceful stop of the survivors (once started: a worker still loading has no SIGTERM handler yet).
      const survivors = alive();
      await Promise.all(survivors.map((w) => w.child.waitForLine(/^ready$/)));
      for (const w of survivors) {
        w.expectedExit = 0;
        w.child.proc.kill("SIGTERM");
      }
      await Promise.all(survivors.map((w) => w.child.exited));
      expect(crashes).toEqual([]);

      const total = actionsQueued + mutationsQueued;
      expect(ids).toHaveLength(total);
      const states = await adminQuery<{ state: string; kind: string; oc_state: string; n: number }>(
        `SELECT state, result::json->>'kind' AS kind, oc_state, count(*)::int AS n FROM "${schema}".work GROUP BY 1, 2, 3`,
      );
      expect(states).toEqual([{ state: "finished", kind: "success", oc_state: "done", n: total }]);
      const counter = await adminQuery<{ n: string }>(`SELECT n FROM "${schema}".app_counter WHERE id = 1`);
      expect(Number(counter[0]!.n)).toBe(mutationsQueued);
      const oc = await adminQuery<{ rows: number; works: number; unknown: number }>(
        `SELECT count(*)::int AS rows, count(DISTINCT work_id)::int AS works,
              count(*) FILTER (WHERE work_id NOT IN (SELECT id FROM "${schema}".work))::int AS unknown
       FROM "${schema}".app_oncomplete`,
      );
      expect(oc[0]).toEqual({ rows: total, works: total, unknown: 0 });
      const { peak, attempts, cutByKill } = peakConcurrency(logDir, workers);
      expect(peak).toBeLessThanOrEqual(MAX_PARALLELISM);
      const attemptRows = await adminQuery<{ extra: number }>(`SELECT (sum(attempt) - count(*))::int AS extra FROM "${schema}".work`);
      console.log(
        "chaos figures:",
        JSON.stringify({
          form: LONG ? "long" : "short",
          works: total,
          actions: actionsQueued,
          mutations: mutationsQueued,
          workers: WORKERS,
          maxParallelism: MAX_PARALLELISM,
          elapsedMs,
          worksPerSecond: Math.round((total / elapsedMs) * 1000),
          kills,
          workersStarted: workers.size,
          restartMs,
          attemptsRecorded: attempts,
          attemptsCutBySigkill: cutByKill,
          attemptsBeyondFirst: attemptRows[0]!.extra,
          peakConcurrentAttempts: peak,
        }),
      );
    } finally {
      for (const w of workers.values()) if (w.exitedAt === null) w.child.proc.kill("SIGKILL");
      await releaseServer?.();
      await monitor.end().catch(() => undefined);
      await t.cleanup().catch(() => undefined);
      rmSync(logDir, { recursive: true, force: true });
    }
  },
);
