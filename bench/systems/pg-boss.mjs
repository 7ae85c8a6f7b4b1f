// pg-boss 10 (PostgreSQL). v10 workers fetch `batchSize` jobs per poll and wait out
// `pollingIntervalSeconds` (minimum 0.5 s) between fetches, even when more jobs wait.
// The fastest documented setting for a concurrency of N is one worker with batchSize N
// and the minimum polling interval; the handler runs the batch concurrently.
import { createRequire } from "node:module";
import pg from "pg";
import { dropSchema, waitForZero } from "../lib/pg.mjs";
import { PG_URL } from "../lib/env.mjs";

const SCHEMA = "pgboss_bench";
const QUEUE = "bench";
const require = createRequire(import.meta.url);

export default {
  id: "pg-boss",
  label: "pg-boss",
  store: "postgres",
  commitReference: "postgres",
  ours: false,
  packageName: "pg-boss",
  durability: "every commit WAL-flushed (server default synchronous_commit=on)",
  config:
    "`new PgBoss({ connectionString, schema })` (pool max 10), `createQueue` (standard policy); " +
    "`work(queue, { batchSize: N, pollingIntervalSeconds: 0.5 }, jobs => Promise.all(jobs.map(noop)))`: " +
    "in v10 a worker waits out its polling interval between fetches, so batchSize and the minimum interval (0.5 s) are its throughput settings. " +
    "Enqueue with `send` / `insert`.",
  // The keyed drain: v10's singleton policy allows one active job per singletonKey through a unique index, and a fetch that would start a second one fails as a whole rather than skipping the key.
  skip: ["drain-keys"],
  available: async () => null,
  version: () => require("pg-boss/package.json").version,
  async reset() {
    await dropSchema(SCHEMA);
  },
  async open(_ctx, { concurrency = 10, onStart, onDone }) {
    const { default: PgBoss } = await import("pg-boss");
    const boss = new PgBoss({ connectionString: PG_URL, schema: SCHEMA });
    boss.on("error", (e) => console.error(`pg-boss: ${e.message}`));
    await boss.start();
    await boss.createQueue(QUEUE);
    let probe = null;
    return {
      enqueueOne: (payload) => boss.send(QUEUE, payload),
      enqueueBatch: (payloads) => boss.insert(payloads.map((data) => ({ name: QUEUE, data }))),
      async start() {
        await boss.work(QUEUE, { batchSize: concurrency, pollingIntervalSeconds: 0.5 }, async (jobs) => {
          await Promise.all(
            jobs.map(async (job) => {
              onStart?.(job.data.i);
            }),
          );
          onDone?.(jobs.length);
        });
      },
      /** pg-boss completes a batch after the handler without awaiting it: wait until none is open. */
      async settle() {
        probe ??= new pg.Client({ connectionString: PG_URL });
        if (!probe._connected) await probe.connect();
        await waitForZero(probe, `SELECT count(*) AS n FROM "${SCHEMA}".job WHERE name = '${QUEUE}' AND state < 'completed'`);
      },
      async close() {
        await boss.stop({ graceful: true, wait: true, timeout: 5000 });
        if (probe) await probe.end();
      },
    };
  },
};
