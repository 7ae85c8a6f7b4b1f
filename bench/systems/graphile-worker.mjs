// graphile-worker (PostgreSQL) in the configuration of its own performance page:
// localQueue batching, completeJobBatchDelay 0, failJobBatchDelay 0, success logs off.
import { createRequire } from "node:module";
import { EventEmitter } from "node:events";
import pg from "pg";
import { dropSchema, waitForZero } from "../lib/pg.mjs";
import { PG_URL } from "../lib/env.mjs";

const SCHEMA = "graphile_worker_bench";
const require = createRequire(import.meta.url);

export default {
  id: "graphile-worker",
  label: "graphile-worker",
  store: "postgres",
  commitReference: "postgres",
  ours: false,
  packageName: "graphile-worker",
  durability: "every commit WAL-flushed (server default synchronous_commit=on)",
  config:
    "`run({ concurrency: N, maxPoolSize: min(N + 1, 25), localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 })`, " +
    "`NO_LOG_SUCCESS=1`, a silent logger: the settings of its performance page (which uses concurrency 24, pool 25, localQueue 500). " +
    "Enqueue with `addJob` / `addJobs` (WorkerUtils). Completed jobs are deleted by graphile-worker itself. " +
    "Keyed drain: the key as `queueName` (a named queue runs one job at a time) and `priority` (lower first, as workpool's).",
  skip: [],
  schema: SCHEMA,
  available: async () => null,
  version: () => require("graphile-worker/package.json").version,
  async reset() {
    await dropSchema(SCHEMA);
  },
  async open(_ctx, { concurrency = 10, onStart, onDone }) {
    // Read at import time by graphile-worker: turns off the per-job success log line.
    process.env.NO_LOG_SUCCESS = "1";
    const { run, makeWorkerUtils, Logger } = await import("graphile-worker");
    const logger = new Logger(() => (level, message) => {
      if (level === "error") console.error(`graphile-worker: ${message}`);
    });
    const utils = await makeWorkerUtils({ connectionString: PG_URL, schema: SCHEMA, logger });
    await utils.migrate();
    let runner = null;
    let probe = null;
    return {
      enqueueOne: (payload) => utils.addJob("noop", payload),
      enqueueBatch: (payloads) => utils.addJobs(payloads.map((payload) => ({ identifier: "noop", payload }))),
      /** A named queue runs its jobs one at a time: keyParallelism 1, with the key as the queue name. */
      enqueueKeyedBatch: (payloads) =>
        utils.addJobs(payloads.map(({ i, key, priority }) => ({ identifier: "noop", payload: { i }, queueName: key, priority }))),
      async start() {
        const events = new EventEmitter();
        if (onDone) events.on("job:complete", () => onDone(1));
        runner = await run({
          connectionString: PG_URL,
          schema: SCHEMA,
          concurrency,
          maxPoolSize: Math.min(concurrency + 1, 25),
          noHandleSignals: true,
          logger,
          events,
          taskList: {
            noop: async (payload) => {
              onStart?.(payload.i);
            },
          },
          preset: { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
        });
      },
      /** `job:complete` fires before the batched completion is written: wait until the table is empty. */
      async settle() {
        probe ??= new pg.Client({ connectionString: PG_URL });
        if (!probe._connected) await probe.connect();
        await waitForZero(probe, `SELECT count(*) AS n FROM "${SCHEMA}"._private_jobs`);
      },
      async close() {
        if (runner) await runner.stop();
        await utils.release();
        if (probe) await probe.end();
      },
    };
  },
};
