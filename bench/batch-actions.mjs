#!/usr/bin/env node
// Batch actions beside plain actions: a backlog of no-op works drained through a batch
// action (maxBatchSize 100) and through a plain action, at maxParallelism 100, on SQLite
// and PostgreSQL. Each measurement runs in a fresh child process: it fills the backlog
// (not timed), then starts the worker and stops the clock once every work has completed.
// Prints works/s, worker CPU per work (process.cpuUsage, user + system, µs) and the mean
// batch size. See notes/batch-actions.md.
//
//   node batch-actions.mjs [--jobs=50000] [--stores=sqlite,postgres] [--modes=plain,batch,batch-wait] [--reps=3]
//
// Needs `npm run build` at the repository root. PostgreSQL: BENCH_PG_URL as for the bench.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { PG_URL } from "./lib/env.mjs";

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, "").split("=")));
const JOBS = Number(args.jobs ?? 50_000);
const STORES = (args.stores ?? "sqlite,postgres").split(",");
const REPS = Number(args.reps ?? 3);
/** plain: a plain action; batch: maxBatchSize 100, maxWaitMs 0; batch-wait: maxBatchSize 100, maxWaitMs 10. */
const MODES = (args.modes ?? "plain,batch,batch-wait").split(",");
const SCHEMA = "batch_actions_bench";
const dist = new URL("../dist/", import.meta.url);

/** One drain in this process: `store` is sqlite or postgres, `mode` plain or batch. */
async function child(store, mode) {
  const { Workpool } = await import(new URL("index.js", dist).href);
  let s;
  let file;
  if (store === "sqlite") {
    file = join(tmpdir(), `workpool-batch-bench-${process.pid}.db`);
    const { sqliteStore } = await import(new URL("drivers/sqlite/index.js", dist).href);
    s = sqliteStore({ filename: file });
  } else {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await client.end();
    const { postgresStore } = await import(new URL("drivers/postgres/index.js", dist).href);
    s = postgresStore({ connectionString: PG_URL, schema: SCHEMA });
  }
  const pool = new Workpool(s, { name: "bench", maxParallelism: 100, logLevel: "ERROR" });
  let calls = 0;
  const handle =
    mode !== "plain"
      ? pool.defineBatchAction(
          "job",
          async (_ctx, items) => {
            calls++;
            return items.map(() => undefined);
          },
          { maxBatchSize: 100, maxWaitMs: mode === "batch-wait" ? 10 : 0 },
        )
      : pool.defineAction("job", async () => {
          calls++;
        });
  for (let i = 0; i < JOBS; i += 10_000) {
    await pool.enqueueActionBatch(
      handle,
      Array.from({ length: Math.min(10_000, JOBS - i) }, (_, j) => ({ i: i + j })),
    );
  }
  let completed = 0;
  const done = new Promise((resolve) =>
    pool.on("completed", () => {
      if (++completed === JOBS) resolve();
    }),
  );
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await pool.start();
  await done;
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  await pool.stop();
  await s.close();
  if (file) for (const ext of ["", "-wal", "-shm"]) rmSync(file + ext, { force: true });
  return { rate: (JOBS * 1000) / ms, cpuUsPerJob: (cpu.user + cpu.system) / JOBS, meanBatch: JOBS / calls };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

if (args.child) {
  const [store, mode] = args.child.split(":");
  process.stdout.write(JSON.stringify(await child(store, mode)) + "\n");
} else {
  const self = fileURLToPath(import.meta.url);
  console.log(`${JOBS.toLocaleString("en-US")} no-op works, maxParallelism 100, median of ${REPS} (each in a fresh process)`);
  console.log("store     mode        works/s   CPU µs/work  mean batch");
  for (const store of STORES) {
    for (const mode of MODES) {
      const runs = [];
      for (let r = 0; r < REPS; r++) {
        const out = execFileSync(process.execPath, [self, `--child=${store}:${mode}`, `--jobs=${JOBS}`], { encoding: "utf8" });
        runs.push(JSON.parse(out.trim().split("\n").pop()));
      }
      const rate = median(runs.map((r) => r.rate));
      const cpu = median(runs.map((r) => r.cpuUsPerJob));
      const batch = median(runs.map((r) => r.meanBatch));
      console.log(
        `${store.padEnd(9)} ${mode.padEnd(11)} ${Math.round(rate).toString().padStart(8)} ${cpu.toFixed(1).padStart(12)} ${batch.toFixed(1).padStart(11)}`,
      );
    }
  }
}
