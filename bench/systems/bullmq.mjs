// BullMQ (Redis). Not durable by default: Redis acknowledges writes from memory; only
// AOF with appendfsync always would make each enqueue durable. The bench uses the Redis
// server as configured and reports its persistence settings.
import { createRequire } from "node:module";
import { REDIS_URL } from "../lib/env.mjs";

const QUEUE = "bench";
const require = createRequire(import.meta.url);

function connectionOptions() {
  const url = new URL(REDIS_URL);
  return {
    host: url.hostname,
    port: Number(url.port || 6379),
    db: Number(url.pathname.slice(1) || 0),
    // Required by BullMQ workers (blocking commands must not give up).
    maxRetriesPerRequest: null,
  };
}

export default {
  id: "bullmq",
  label: "BullMQ",
  store: "redis",
  commitReference: "redis",
  ours: false,
  packageName: "bullmq",
  durability: "not durable as configured: Redis keeps jobs in memory (see the Redis persistence settings above)",
  config:
    "`new Worker(queue, noop, { concurrency: N, removeOnComplete: { count: 1000 }, removeOnFail: { count: 5000 } })`: " +
    "the concurrency option and the auto-removal its production guide recommends; enqueue with `add` / `addBulk`.",
  // The keyed drain: per-key concurrency (groups) is a BullMQ Pro feature, not in the open-source package.
  skip: ["drain-keys"],
  async available() {
    const { Redis } = await import("ioredis");
    const r = new Redis({ ...connectionOptions(), lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
    try {
      await r.connect();
      await r.ping();
      return null;
    } catch (e) {
      return `Redis is not reachable (${e.message})`;
    } finally {
      r.disconnect();
    }
  },
  version: () => require("bullmq/package.json").version,
  async reset() {
    const { Redis } = await import("ioredis");
    const r = new Redis(connectionOptions());
    await r.flushdb();
    await r.quit();
  },
  async open(_ctx, { concurrency = 10, onStart, onDone }) {
    const { Queue, Worker } = await import("bullmq");
    const { Redis } = await import("ioredis");
    const connection = new Redis(connectionOptions());
    const queue = new Queue(QUEUE, { connection });
    let worker = null;
    return {
      enqueueOne: (payload) => queue.add("noop", payload),
      enqueueBatch: (payloads) => queue.addBulk(payloads.map((data) => ({ name: "noop", data }))),
      async start() {
        worker = new Worker(
          QUEUE,
          async (job) => {
            onStart?.(job.data.i);
          },
          {
            connection: new Redis(connectionOptions()),
            concurrency,
            removeOnComplete: { count: 1000 },
            removeOnFail: { count: 5000 },
          },
        );
        worker.on("error", (e) => console.error(`bullmq: ${e.message}`));
        if (onDone) worker.on("completed", () => onDone(1));
        await worker.waitUntilReady();
      },
      async close() {
        if (worker) {
          await worker.close();
          await worker.connection?.client?.then?.((c) => c.quit()).catch(() => undefined);
        }
        await queue.close();
        await connection.quit();
      },
    };
  },
};
