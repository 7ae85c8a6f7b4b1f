/**
 * The short form of the simulator on SQLite: many seeds, different every run (the first
 * seed is printed; any failure prints its replay command and trace).
 */
import { expect, it } from "vitest";
import { describeFailure } from "./run.js";
import { runBatch } from "./batch.js";
import { seedsFromEnv } from "./seeds.js";

it("holds every invariant over the SQLite seeds", async () => {
  const { first, count } = seedsFromEnv("SQLITE", 1000);
  // Workflows have a short form of their own (sim-workflows.test.ts).
  const r = await runBatch({ store: "sqlite", firstSeed: first, seeds: count, workflows: "never" });
  console.log(
    `sim sqlite: seeds ${first}..${first + r.seeds - 1}, ${r.works} works, ${r.faults} faults, ${r.crashes} crashes, ${Math.round(r.ms)} ms`,
  );
  expect(r.failures.map((f) => describeFailure(f))).toEqual([]);
}, 600_000);
