// The CPU-per-job step: one case of workpool SQLite measured beside the raw SQL reference
// (sql-floor.mjs) in the same fresh process, so both see the same machine at the same
// moments and their ratio does not move with it. CPU is process.cpuUsage() (user +
// system) around the measured calls only; with better-sqlite3 the statements and the
// fsync run on the main thread.
import { rmSync } from "node:fs";
import { FILL_BATCH_SIZE } from "./env.mjs";
import { floorDrain, floorEnqueueBatch, floorEnqueueOne } from "./sql-floor.mjs";
import { drain, enqueueBatch, enqueueOne } from "./ops.mjs";

/** Runs the workpool side of one case; returns its CPU µs per job and how many jobs it did. */
async function workpoolSide(system, ctx, c) {
  await system.reset(ctx);
  if (c.kind === "drain") {
    await enqueueBatch(system, ctx, { n: c.n, batch: FILL_BATCH_SIZE, warmUp: false });
    const r = await drain(system, ctx, { n: c.n, concurrency: c.concurrency, capS: c.capS });
    return { usPerJob: r.cpuUsPerJob, jobs: r.completed, capped: r.capped };
  }
  if (c.kind === "enqueueOne") {
    const r = await enqueueOne(system, ctx, { n: c.n, capS: c.capS, warmUpS: 0.2 });
    return { usPerJob: r.cpuUsPerJob, jobs: r.done, capped: r.capped };
  }
  const r = await enqueueBatch(system, ctx, { n: c.n, batch: c.batch, capS: c.capS });
  return { usPerJob: r.cpuUsPerJob, jobs: r.done, capped: r.capped };
}

/** Runs the raw reference of one case on a fresh store of the same kind; returns its CPU µs per job. */
async function floorSide(system, ctx, c) {
  const { store, files } = await system.openReference(ctx);
  try {
    if (c.kind === "drain") return floorDrain(store.db, c.n, c.concurrency).usPerJob;
    if (c.kind === "enqueueOne") return floorEnqueueOne(store.db, c.n);
    return floorEnqueueBatch(store.db, c.n, c.batch);
  } finally {
    await store.close();
    for (const f of files) rmSync(f, { force: true });
  }
}

/**
 * One case (`{ kind: "drain" | "enqueueOne" | "enqueueBatch", n, concurrency?, batch?,
 * capS }`) of `system` (a workpool SQLite adapter with openReference) and its raw
 * reference; `floorFirst` alternates which runs first between repetitions.
 */
export async function cpuVsFloor(system, ctx, { kase, floorFirst }) {
  let floor;
  if (floorFirst) floor = await floorSide(system, ctx, kase);
  const ours = await workpoolSide(system, ctx, kase);
  if (!floorFirst) floor = await floorSide(system, ctx, kase);
  await system.reset(ctx);
  return { ...ours, floorUsPerJob: floor, ratio: ours.usPerJob / floor };
}
