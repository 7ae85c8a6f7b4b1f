/**
 * The simulator can fail: each deliberately broken driver of variants.ts is caught, by
 * the invariant it breaks, within a bounded number of seeds (from seed 1, so the bound
 * holds the same way every run). Every variant runs on SQLite; those marked `postgres`
 * run on PostgreSQL too, as do the workflow layer's (wf-variants.ts; all but those marked
 * `sqliteOnly`), in runs that all have workflows.
 */
import { expect, it } from "vitest";
import { runBatch } from "./batch.js";
import type { StoreKind } from "./stores.js";
import { VARIANTS } from "./variants.js";
import { WF_VARIANTS } from "./wf-variants.js";
import { SKIP_POSTGRES } from "../helpers/postgres-env.js";
import { holdServerWhenUsed } from "../postgres/helpers.js";

// The chaos test restarts the server: hold it shared while these tests use it.
holdServerWhenUsed();

/** Most seeds a variant may take to be caught. */
const BOUND = 400;

const cases = [...VARIANTS, ...WF_VARIANTS].flatMap((v) => [
  [v.name, "sqlite" as StoreKind, v] as const,
  ...((v.postgres || v.workflows) && !v.sqliteOnly && !SKIP_POSTGRES ? [[v.name, "postgres" as StoreKind, v] as const] : []),
]);

it.each(cases)(
  "catches %s on %s",
  async (_name, store, variant) => {
    const r = await runBatch({ store, firstSeed: 1, seeds: BOUND, variant, workflows: variant.workflows ? "always" : undefined });
    const caught = r.failures[0];
    expect(caught, `${variant.bug}: not caught in ${BOUND} seeds on ${store}`).toBeDefined();
    expect(variant.caughtBy).toContain(caught!.invariant);
    console.log(`${variant.name} (${store}): caught at seed ${caught!.seed} by ${caught!.invariant}`);
  },
  300_000,
);
