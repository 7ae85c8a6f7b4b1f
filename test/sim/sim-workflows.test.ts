/**
 * The short form of the simulator with workflows in every run, on both stores: fewer
 * seeds than the plain short form (a run with workflows makes several times the store
 * calls), different every run; the first seed is printed.
 */
import { describe, expect, it } from "vitest";
import { describeFailure } from "./run.js";
import { runBatch } from "./batch.js";
import { seedsFromEnv } from "./seeds.js";
import type { StoreKind } from "./stores.js";
import { SKIP_POSTGRES } from "../helpers/postgres-env.js";
import { holdServerWhenUsed } from "../postgres/helpers.js";

// The chaos test restarts the server: hold it shared while these tests use it.
holdServerWhenUsed();

const COUNTS: Record<StoreKind, number> = { sqlite: 60, postgres: 15 };

describe.each<StoreKind>(SKIP_POSTGRES ? ["sqlite"] : ["sqlite", "postgres"])("workflows on %s", (store) => {
  it("holds every invariant over the seeds", async () => {
    const { first, count } = seedsFromEnv(`WF_${store.toUpperCase()}`, COUNTS[store]);
    const r = await runBatch({ store, firstSeed: first, seeds: count, workflows: "always" });
    console.log(
      `sim workflows ${store}: seeds ${first}..${first + r.seeds - 1}, ${r.runs} runs (${r.blocked} blocked), ${r.works} works, ` +
        `${r.faults} faults, ${r.crashes} crashes, ${Math.round(r.ms)} ms`,
    );
    expect(r.failures.map((f) => describeFailure(f))).toEqual([]);
  }, 600_000);
});
