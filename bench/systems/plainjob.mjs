// plainjob (SQLite via better-sqlite3). Its queue sets WAL and synchronous=NORMAL itself
// (durable against a process crash, not power loss). A plainjob worker runs one job at a
// time, so concurrency N is N workers in the process.
import { createRequire } from "node:module";
import { join } from "node:path";
import { rmSync } from "node:fs";

const require = createRequire(import.meta.url);
const TYPE = "bench";
const silent = { error: (...a) => console.error("plainjob:", ...a), warn: () => {}, info: () => {}, debug: () => {} };
const file = (ctx) => join(ctx.dir, "plainjob.db");

export default {
  id: "plainjob",
  label: "plainjob",
  store: "sqlite",
  commitReference: "sqliteNormal",
  ours: false,
  packageName: "plainjob",
  durability: "survives a process crash, not power loss (plainjob sets WAL, synchronous=NORMAL)",
  config:
    "`defineQueue({ connection: better(new Database(file)) })` (plainjob sets WAL, synchronous=NORMAL, busy_timeout 5000); " +
    "N × `defineWorker(type, noop, { queue })` (one job at a time each, default 1 s poll when idle); enqueue with `add` / `addMany`. " +
    "Its README suggests one worker process per CPU for more throughput; here every system gets one worker process.",
  // The keyed drain: it has neither keys nor priorities.
  skip: ["drain-keys"],
  available: async () => null,
  version: () => require("plainjob/package.json").version,
  async reset(ctx) {
    for (const ext of ["", "-wal", "-shm"]) rmSync(file(ctx) + ext, { force: true });
  },
  async open(ctx, { concurrency = 10, onStart, onDone }) {
    const { default: Database } = await import("better-sqlite3");
    const { better, defineQueue, defineWorker } = await import("plainjob");
    const queue = defineQueue({ connection: better(new Database(file(ctx))), logger: silent });
    const workers = [];
    const loops = [];
    return {
      enqueueOne: async (payload) => queue.add(TYPE, payload),
      enqueueBatch: async (payloads) => queue.addMany(TYPE, payloads),
      async start() {
        for (let k = 0; k < concurrency; k++) {
          const w = defineWorker(
            TYPE,
            async (job) => {
              onStart?.(JSON.parse(job.data).i);
            },
            { queue, logger: silent, onCompleted: onDone ? () => onDone(1) : undefined },
          );
          workers.push(w);
          loops.push(w.start().catch((e) => console.error("plainjob worker:", e)));
        }
      },
      async close() {
        // stop() only ends the idle sleep; wait for each loop to finish its job before closing.
        await Promise.all(workers.map((w) => w.stop()));
        await Promise.all(loops);
        queue.close();
      },
    };
  },
};
