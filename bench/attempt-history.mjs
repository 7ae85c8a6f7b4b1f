// What recording each failed attempt (its error, name and stack, in the work's
// attempt_log) costs a drain: two builds of workpool, run in alternated pairs (A B A B …),
// each drain in a fresh child process. Results: notes/attempt-history.md.
//
//   node bench/attempt-history.mjs --a=<dist folder> --b=<dist folder> [--pairs=5] [--jobs=4000]
//     [--store=sqlite,postgres] [--kind=failing,success]
//
// "failing": every job throws an Error on its first two attempts and succeeds on the
// third (retry with no backoff), so two thirds of all attempts fail; "success": every
// job succeeds at once. Concurrency 100 in one worker process.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { PG_URL } from "./lib/env.mjs";

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [key, value] = a.replace(/^--/, "").split("=");
    return [key, value ?? "true"];
  }),
);

/** One drain in this process: prints `{"jobsPerSecond": n}`. */
async function child() {
  const dist = pathToFileURL(resolve(args.dist) + "/").href;
  const { Workpool } = await import(`${dist}index.js`);
  const jobs = Number(args.jobs);
  let store;
  let cleanup = async () => undefined;
  if (args.store === "sqlite") {
    const { sqliteStore } = await import(`${dist}drivers/sqlite/index.js`);
    const dir = mkdtempSync(join(tmpdir(), "workpool-attempt-history-"));
    store = sqliteStore({ filename: join(dir, "a.db") });
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  } else {
    const { postgresStore } = await import(`${dist}drivers/postgres/index.js`);
    const schema = `attempt_history_${process.pid}`;
    store = postgresStore({ connectionString: PG_URL, schema });
    cleanup = async () => {
      const pg = (await import("pg")).default;
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await c.end();
    };
  }
  const pool = new Workpool(store, { name: "ah", maxParallelism: 100, logLevel: "ERROR" });
  let finished = 0;
  let done;
  const all = new Promise((r) => (done = r));
  pool.on("completed", (e) => {
    if (e.status !== "retrying" && ++finished === jobs) done();
  });
  const failing = args.kind === "failing";
  const job = pool.defineAction("job", (ctx) => {
    if (failing && ctx.attempt < 3) throw new Error(`attempt ${ctx.attempt} failed`);
    return null;
  });
  for (let i = 0; i < jobs; i += 1000) {
    await pool.enqueueActionBatch(
      job,
      Array.from({ length: Math.min(1000, jobs - i) }, (_, k) => ({ i: i + k })),
      { retry: { maxAttempts: 3, initialBackoffMs: 0, base: 1 } },
    );
  }
  const t = performance.now();
  const cpu = process.cpuUsage();
  await pool.start();
  await all;
  const seconds = (performance.now() - t) / 1000;
  const used = process.cpuUsage(cpu);
  await pool.stop();
  await store.close();
  await cleanup();
  console.log(JSON.stringify({ jobsPerSecond: jobs / seconds, cpuMsPerJob: (used.user + used.system) / 1000 / jobs }));
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** One drain in a fresh process; a drain that fails (the server restarting, say) is run again, up to 3 times. */
function runChild(dist, store, kind, jobs) {
  for (let tries = 1; ; tries++) {
    const out = spawnSync(
      process.execPath,
      [process.argv[1], "--child", `--dist=${dist}`, `--store=${store}`, `--kind=${kind}`, `--jobs=${jobs}`],
      {
        encoding: "utf8",
      },
    );
    if (out.status === 0) return JSON.parse(out.stdout.trim().split("\n").pop());
    if (tries === 3) throw new Error(`child failed: ${out.stderr}`);
    console.error(`a drain failed, running it again: ${out.stderr.split("\n").find((l) => l.startsWith("Error")) ?? out.stderr}`);
    spawnSync("sleep", ["10"]);
  }
}

async function parent() {
  const pairs = Number(args.pairs ?? 5);
  const jobs = Number(args.jobs ?? 4000);
  console.log(`A = ${args.a}\nB = ${args.b}\n${pairs} pairs of ${jobs} jobs, concurrency 100\n`);
  console.log(
    "| store | jobs | A jobs/s (median, min–max) | B jobs/s | B/A (median of pairs) | A CPU ms/job | B CPU ms/job | B/A |\n" +
      "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
  );
  for (const store of (args.store ?? "sqlite,postgres").split(",")) {
    for (const kind of (args.kind ?? "failing,success").split(",")) {
      const a = [];
      const b = [];
      for (let i = 0; i < pairs; i++) {
        // Alternate which build goes first, so a drift of the machine falls on both.
        if (i % 2 === 0) {
          a.push(runChild(args.a, store, kind, jobs));
          b.push(runChild(args.b, store, kind, jobs));
        } else {
          b.push(runChild(args.b, store, kind, jobs));
          a.push(runChild(args.a, store, kind, jobs));
        }
      }
      const range = (xs, digits) => `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;
      const rate = (xs) => xs.map((x) => x.jobsPerSecond);
      const cpu = (xs) => xs.map((x) => x.cpuMsPerJob);
      const ratio = (f) => median(f(b).map((x, i) => x / f(a)[i])).toFixed(3);
      console.log(
        `| ${store} | ${kind} | ${range(rate(a), 0)} | ${range(rate(b), 0)} | ${ratio(rate)} | ${range(cpu(a), 3)} | ${range(cpu(b), 3)} | ${ratio(cpu)} |`,
      );
    }
  }
}

await (args.child === "true" ? child() : parent());
