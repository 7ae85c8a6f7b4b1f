// Every system the bench compares, in table order. Each adapter has the same shape:
//
//   id, label, store ("sqlite" | "postgres" | "redis"), ours, durability, config (markdown),
//   commitReference: the single-row commit its enqueues are compared with (a kind of
//     lib/commit-rate.mjs: the same store with the same durability setting),
//   skip: workload ids it sits out,
//   available(): null, or why it is skipped on this machine,
//   version(): its package version,
//   reset(ctx): drops all of its state (schema, Redis database, SQLite file),
//   open(ctx, { concurrency, keyParallelism?, onStart(i), onDone(k) }) -> {
//     enqueueOne(payload), enqueueBatch(payloads), enqueueKeyedBatch(payloads)?, start(), settle()?, close()
//   }
//   enqueueKeyedBatch takes payloads { i, key, priority } (lower priority first) for the
//   keyed drain, whose worker runs at most keyParallelism jobs of one key at once; a
//   system without per-key concurrency lists "drain-keys" in `skip`, saying why.
//
// The handler of every system is the same no-op that calls onStart(payload.i) on its
// first line; onDone(k) reports k jobs recorded as completed; settle() (optional) waits
// until completions the system writes in the background are in the store.
import { workpoolPostgres, workpoolSqlite } from "./workpool.mjs";
import plainjob from "./plainjob.mjs";
import graphileWorker from "./graphile-worker.mjs";
import pgBoss from "./pg-boss.mjs";
import bullmq from "./bullmq.mjs";
import dbos from "./dbos.mjs";

export const SYSTEMS = [workpoolSqlite("FULL"), workpoolSqlite("NORMAL"), plainjob, workpoolPostgres, graphileWorker, pgBoss, bullmq, dbos];

export function systemById(id) {
  const s = SYSTEMS.find((x) => x.id === id);
  if (!s) throw new Error(`unknown system ${id}; known: ${SYSTEMS.map((x) => x.id).join(", ")}`);
  return s;
}
