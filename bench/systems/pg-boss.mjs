// pg-boss 10 (PostgreSQL). A v10 worker (one work() call) fetches up to `batchSize` jobs,
// runs its handler, completes the batch, and then waits out what is left of
// `pollingIntervalSeconds` (minimum 0.5 s) before its next fetch, even when more jobs wait.
// Its docs give two throughput settings: more work() calls (each one a worker of its own)
// and a larger batchSize. For a concurrency of N: N work() calls, each running the jobs of
// its batch one after another, so at most N jobs run at once, with batches of BATCH_SIZE.
import { createRequire } from "node:module";
import pg from "pg";
import { dropSchema, waitForZero, withClient } from "../lib/pg.mjs";
import { PG_URL } from "../lib/env.mjs";

const SCHEMA = "pgboss_bench";
/** Jobs each work() call fetches at a time. */
const BATCH_SIZE = 100;
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
    "`new PgBoss({ connectionString, schema })` (pool max 10), `createQueue` (standard policy); for concurrency N, " +
    `N × \`work(queue, { batchSize: ${BATCH_SIZE}, pollingIntervalSeconds: 0.5 }, async (jobs) => { for (const job of jobs) await noop(job) })\`: ` +
    "its docs' two throughput settings, more workers and a larger batch; each worker runs its batch one job at a time, so at most N jobs run at once, " +
    "and waits out the minimum polling interval (0.5 s) between fetches. Enqueue with `send` / `insert`.",
  // The keyed drain: v10's singleton policy allows one active job per singletonKey through a unique index, and a fetch that would start a second one fails as a whole rather than skipping the key.
  skip: ["drain-keys"],
  schema: SCHEMA,
  available: async () => null,
  version: () => require("pg-boss/package.json").version,
  async reset() {
    await dropSchema(SCHEMA);
  },
  /**
   * pg-boss's maintenance removal of completed jobs with the shortest settings: its own
   * archive statement (job → archive) and drop statement (archive rows deleted), both with
   * a 0-second interval, each in its advisory-locked transaction as its maintenance runs them.
   */
  async cleanup() {
    const plans = require("pg-boss/src/plans");
    await withClient(async (c) => {
      await c.query(plans.locked(SCHEMA, plans.archive(SCHEMA, "0 seconds", "0 seconds")));
      await c.query(plans.locked(SCHEMA, plans.drop(SCHEMA, "0 seconds")));
    });
    return {};
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
        const noop = async (job) => {
          onStart?.(job.data.i);
        };
        for (let k = 0; k < concurrency; k++) {
          await boss.work(QUEUE, { batchSize: BATCH_SIZE, pollingIntervalSeconds: 0.5 }, async (jobs) => {
            for (const job of jobs) await noop(job);
            onDone?.(jobs.length);
          });
        }
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
