/**
 * The short form of the simulator on PostgreSQL: fewer seeds than on SQLite (each store
 * call is a round trip), different every run; the first seed is printed.
 */
import { expect, it } from "vitest";
import { describeFailure } from "./run.js";
import { runBatch } from "./batch.js";
import { seedsFromEnv } from "./seeds.js";
import { useSharedServer } from "../postgres/helpers.js";

// The chaos test restarts the server: hold it shared while these tests use it.
useSharedServer();

it("holds every invariant over the PostgreSQL seeds", async () => {
  const { first, count } = seedsFromEnv("POSTGRES", 100);
  // Workflows have a short form of their own (sim-workflows.test.ts).
  const r = await runBatch({ store: "postgres", firstSeed: first, seeds: count, workflows: "never" });
  console.log(
    `sim postgres: seeds ${first}..${first + r.seeds - 1}, ${r.works} works, ${r.faults} faults, ${r.crashes} crashes, ${Math.round(r.ms)} ms`,
  );
  expect(r.failures.map((f) => describeFailure(f))).toEqual([]);
}, 600_000);
