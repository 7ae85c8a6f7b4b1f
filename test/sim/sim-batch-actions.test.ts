/**
 * The short form of the simulator with batch actions: every action of the workload is a
 * batch action (maxBatchSize 3, maxWaitMs 0 or 300), on both stores, under the same faults,
 * crashes and invariants as plain actions. A failure prints its seed and trace.
 */
import { expect, it } from "vitest";
import { describeFailure } from "./run.js";
import { runBatch } from "./batch.js";
import { seedsFromEnv } from "./seeds.js";
import type { StoreKind } from "./stores.js";

for (const store of ["sqlite", "postgres"] as StoreKind[]) {
  it.skipIf(store === "postgres" && !process.env.DATABASE_URL)(
    `holds every invariant with batch actions on ${store}`,
    async () => {
      const { first, count } = seedsFromEnv(`BATCH_${store.toUpperCase()}`, store === "sqlite" ? 200 : 60);
      const r = await runBatch({ store, firstSeed: first, seeds: count, workflows: "never", batchActions: true });
      console.log(
        `sim ${store} batch actions: seeds ${first}..${first + r.seeds - 1}, ${r.works} works, ${r.faults} faults, ${r.crashes} crashes, ${Math.round(r.ms)} ms`,
      );
      expect(r.failures.map((f) => describeFailure(f))).toEqual([]);
    },
    600_000,
  );
}
