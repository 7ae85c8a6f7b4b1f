/**
 * The simulator can fail: each deliberately broken driver of variants.ts is caught, by
 * the invariant it breaks, within a bounded number of seeds (from seed 1, so the bound
 * holds the same way every run).
 */
import { expect, it } from "vitest";
import { runBatch } from "./batch.js";
import { VARIANTS } from "./variants.js";

/** Most seeds a variant may take to be caught. */
const BOUND = 400;

it.each(VARIANTS.map((v) => [v.name, v] as const))(
  "catches %s",
  async (_name, variant) => {
    const r = await runBatch({ store: "sqlite", firstSeed: 1, seeds: BOUND, variant });
    const caught = r.failures[0];
    expect(caught, `${variant.bug}: not caught in ${BOUND} seeds`).toBeDefined();
    expect(variant.caughtBy).toContain(caught!.invariant);
    console.log(`${variant.name}: caught at seed ${caught!.seed} by ${caught!.invariant}`);
  },
  300_000,
);
