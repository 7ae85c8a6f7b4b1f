/**
 * Seeds that once broke an invariant, each kept with the bug it found (fixed in src).
 * A seed replays the same run only with the same simulator: a change to the generator
 * can move a bug to another seed, so each entry names what its run must reach.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeFailure, runSeed } from "./run.js";
import { createSimStore, type SimStore, type StoreKind } from "./stores.js";
import { SKIP_POSTGRES } from "../helpers/postgres-env.js";

// `rates: false`: the run the seed made before rate limits were generated (with one, the fast path it needs is off).
const SEEDS: { seed: number; store: StoreKind; bug: string; rates?: boolean }[] = [
  {
    seed: 147,
    store: "sqlite",
    bug: "a stopping worker handed back a claimed attempt whose work was canceled meanwhile; another worker ran it again",
  },
  {
    seed: 30002301,
    store: "postgres",
    rates: false,
    bug: "a worker at its local cap (filled by the enqueue fast path) set 0 ms poll timers for due work it could not take",
  },
];

for (const kind of new Set(SEEDS.map((s) => s.store))) {
  describe.skipIf(kind === "postgres" && SKIP_POSTGRES)(`regression seeds on ${kind}`, () => {
    let store: SimStore;
    beforeAll(async () => {
      store = await createSimStore(kind);
    });
    afterAll(() => store.close());

    it.each(SEEDS.filter((s) => s.store === kind))("seed $seed: $bug", async ({ seed, rates }) => {
      const r = await runSeed({ seed, store, rates });
      expect(r.ok ? "ok" : describeFailure(r)).toBe("ok");
    });
  });
}
