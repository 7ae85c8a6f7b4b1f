/**
 * Seeds that once broke an invariant, each kept with the bug it found (fixed in src).
 * A seed replays the same run only with the same simulator: a change to the generator
 * can move a bug to another seed, so each entry names what its run must reach.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeFailure, runSeed } from "./run.js";
import { createSimStore, type SimStore, type StoreKind } from "./stores.js";
import { SKIP_POSTGRES } from "../helpers/postgres-env.js";
import { holdServerWhenUsed } from "../postgres/helpers.js";

// The chaos test restarts the server: hold it shared while these tests use it.
holdServerWhenUsed();

// `rates: false`: the run the seed made before rate limits were generated (with one, the fast path it needs is off).
// `timing: false`: the run the seed made before holds and retries without backoff were generated.
// `workflows: "always"`: a seed found in runs that all have workflows (the others run without them).
// `extras: true`: a seed found with step.map, patches and the operator's actions (the others run without, as found).
const SEEDS: {
  seed: number;
  store: StoreKind;
  bug: string;
  rates?: boolean;
  timing?: boolean;
  workflows?: "always";
  extras?: boolean;
}[] = [
  {
    seed: 147,
    store: "sqlite",
    timing: false,
    bug: "a stopping worker handed back a claimed attempt whose work was canceled meanwhile; another worker ran it again",
  },
  {
    seed: 30002301,
    store: "postgres",
    rates: false,
    bug: "a worker at its local cap (filled by the enqueue fast path) set 0 ms poll timers for due work it could not take",
  },
  ...(["sqlite", "postgres"] as const).map((store) => ({
    seed: 54,
    store,
    bug: "a heartbeat's lost answer for an attempt that had ended aborted the newer attempt of the same work its worker had claimed",
  })),
  {
    seed: 92,
    store: "sqlite",
    bug: "a claim took its time before waiting for the store: stale starts let a third start of a key into 2 per 2,000 ms",
  },
  {
    seed: 90002649,
    store: "sqlite",
    bug: "work a claim had given back in place of its key's parked work was canceled before it ran; the parked work waited for good",
  },
  {
    seed: 4,
    store: "postgres",
    bug: "a claim took its time before waiting for the store: an enqueue's claim that waited 1 s started a lease that had already ended",
  },
  {
    seed: 10535,
    store: "sqlite",
    workflows: "always",
    bug: "a canceling run replayed by code that no longer matches its journal became blocked, then its timeout finished it failed, not canceled",
  },
  {
    seed: 30332,
    store: "postgres",
    workflows: "always",
    bug: "a canceling run replayed by code that no longer matches its journal became blocked, then its timeout finished it failed, not canceled",
  },
  {
    seed: 70046,
    store: "sqlite",
    workflows: "always",
    bug: "a fan-out whose caught failure was given in the round of the cancel swallowed the cancel; the function went on and its next step got work",
  },
  {
    seed: 30070,
    store: "postgres",
    workflows: "always",
    bug: "a fan-out whose caught failure was given in the round of the cancel swallowed the cancel; the function went on and its next step got work",
  },
  {
    seed: 5292,
    store: "sqlite",
    workflows: "always",
    bug: "a fan-out's canceled step reached Promise.all a turn later than its failed step (a .then on the canceled one); the function caught the failure and its next step got work",
  },
  {
    seed: 7241,
    store: "postgres",
    workflows: "always",
    extras: true,
    bug: "a fork kept entries its source's cancel had ended; its function was given that cancel and started its next steps in a canceling run",
  },
  {
    seed: 50,
    store: "sqlite",
    workflows: "always",
    extras: true,
    bug: "a parked pinned run's advance, enqueued at each pick-up, kept landing in a process without its version; the run never moved on and its bouncing advances took every start",
  },
];

for (const kind of new Set(SEEDS.map((s) => s.store))) {
  describe.skipIf(kind === "postgres" && SKIP_POSTGRES)(`regression seeds on ${kind}`, () => {
    let store: SimStore;
    beforeAll(async () => {
      store = await createSimStore(kind);
    });
    afterAll(() => store.close());

    it.each(SEEDS.filter((s) => s.store === kind))("seed $seed: $bug", async ({ seed, rates, timing, workflows, extras }) => {
      const r = await runSeed({ seed, store, rates, timing, extras: extras ?? false, workflows: workflows ?? "never" });
      expect(r.ok ? "ok" : describeFailure(r)).toBe("ok");
    });
  });
}
