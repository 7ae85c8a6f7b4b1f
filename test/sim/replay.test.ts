/**
 * A seed is a run: replaying it gives the same steps, faults and trace, on both stores.
 * Each run gets a store of its own, as `npm run sim -- --seed` replays one.
 */
import { describe, expect, it } from "vitest";
import { runSeed } from "./run.js";
import { createSimStore, type SimStore, type StoreKind } from "./stores.js";
import { SKIP_POSTGRES } from "../helpers/postgres-env.js";
import { holdServerWhenUsed } from "../postgres/helpers.js";

// The chaos test restarts the server: hold it shared while these tests use it.
holdServerWhenUsed();

describe.each<StoreKind>(SKIP_POSTGRES ? ["sqlite"] : ["sqlite", "postgres"])("replay on %s", (kind) => {
  /** Runs `seed` on a fresh store. */
  async function runFresh(seed: number, workflows: "never" | "always"): Promise<Awaited<ReturnType<typeof runSeed>>> {
    const store: SimStore = await createSimStore(kind);
    try {
      return await runSeed({ seed, store, workflows });
    } finally {
      await store.close();
    }
  }

  it.each([
    ["without workflows", "never"],
    ["with workflows", "always"],
  ] as const)("runs a seed the same way every time, %s", async (_what, workflows) => {
    for (const seed of [3, 11, 42]) {
      const a = await runFresh(seed, workflows);
      const b = await runFresh(seed, workflows);
      expect(a.ok).toBe(true);
      expect(b.trace).toEqual(a.trace);
      expect([b.steps, b.faults, b.crashes, b.works, b.runs]).toEqual([a.steps, a.faults, a.crashes, a.works, a.runs]);
    }
  });
});
