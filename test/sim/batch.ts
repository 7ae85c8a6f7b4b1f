/**
 * Runs many seeds on one store and, for a failing seed, shrinks it: fewer steps, fewer
 * kinds of fault, while the same invariant still breaks.
 */
import type { Operated } from "./wf-operator-checks.js";
import { FAULT_KINDS, type FaultKind } from "./faulty-driver.js";
import { describeFailure, runSeed, type RunReport } from "./run.js";
import { createSimStore, type StoreKind } from "./stores.js";
import type { Variant } from "./variants.js";
import type { WorkflowMode } from "./wf-run.js";

/** What a batch found. */
export interface BatchReport {
  store: StoreKind;
  seeds: number;
  firstSeed: number;
  failures: RunReport[];
  ms: number;
  works: number;
  faults: number;
  crashes: number;
  steps: number;
  lateResults: number;
  /** Workflow runs made, and those that ended blocked. */
  runs: number;
  blocked: number;
  /** Restarts, skips and forks seen committed. */
  operated: Operated;
}

/** Options of a batch. */
export interface BatchOptions {
  store: StoreKind;
  firstSeed: number;
  seeds: number;
  variant?: Variant;
  /** Stop at the first failure (default true). */
  stopAtFailure?: boolean;
  /** Which runs have workflows (default `some`). */
  workflows?: WorkflowMode;
  /** Whether the application's actions are batch actions (default false). */
  batchActions?: boolean;
  /** Called after each seed. */
  progress?: (done: number, report: RunReport) => void;
}

/**
 * Seeds run on one store before it is replaced by a fresh one: a store keeps every seed's
 * rows and the crashed processes' leftovers, and a long batch on one store slowed from
 * about 30 seeds/s to 2 after 5,000 seeds.
 */
const SEEDS_PER_STORE = 200;

/** Runs seeds firstSeed, firstSeed+1, ... on a store replaced every SEEDS_PER_STORE seeds. */
export async function runBatch(o: BatchOptions): Promise<BatchReport> {
  let store = await createSimStore(o.store);
  const out: BatchReport = {
    store: o.store,
    seeds: 0,
    firstSeed: o.firstSeed,
    failures: [],
    ms: 0,
    works: 0,
    faults: 0,
    crashes: 0,
    steps: 0,
    lateResults: 0,
    runs: 0,
    blocked: 0,
    operated: { restarts: 0, skips: 0, forks: 0 },
  };
  const t0 = performance.now();
  try {
    for (let i = 0; i < o.seeds; i++) {
      if (i > 0 && i % SEEDS_PER_STORE === 0) {
        await store.close();
        store = await createSimStore(o.store);
      }
      const r = await runSeed({ seed: o.firstSeed + i, store, variant: o.variant, workflows: o.workflows, batchActions: o.batchActions });
      out.seeds++;
      out.works += r.works;
      out.faults += r.faults;
      out.crashes += r.crashes;
      out.steps += r.steps;
      out.lateResults += r.lateResults;
      out.runs += r.runs;
      out.blocked += r.blocked;
      out.operated.restarts += r.operated.restarts;
      out.operated.skips += r.operated.skips;
      out.operated.forks += r.operated.forks;
      o.progress?.(i + 1, r);
      if (!r.ok) {
        out.failures.push(r);
        if (o.stopAtFailure ?? true) break;
      }
    }
  } finally {
    out.ms = performance.now() - t0;
    await store.close();
  }
  return out;
}

/** A failing run made smaller: the fewest steps and fault kinds that still break the same invariant. */
export interface Shrunk {
  report: RunReport;
  steps: number;
  faults: FaultKind[];
}

/** Shrinks a failing seed on a fresh store of the same kind. */
export async function shrink(failing: RunReport, variant?: Variant): Promise<Shrunk> {
  const store = await createSimStore(failing.store as StoreKind);
  try {
    const fails = async (steps: number, faults: FaultKind[]): Promise<RunReport | null> => {
      const r = await runSeed({ seed: failing.seed, store, steps, faults, variant, workflows: failing.workflows });
      return !r.ok && r.invariant === failing.invariant ? r : null;
    };
    let best: Shrunk = { report: failing, steps: failing.steps, faults: [...FAULT_KINDS] };
    // Fewer steps of the random phase: halve while it still fails, then walk down.
    for (let steps = Math.floor(best.steps / 2); steps >= 1; steps = Math.floor(steps / 2)) {
      const r = await fails(steps, best.faults);
      if (!r) break;
      best = { report: r, steps, faults: best.faults };
    }
    for (const f of FAULT_KINDS) {
      const faults = best.faults.filter((x) => x !== f);
      const r = await fails(best.steps, faults);
      if (r) best = { report: r, steps: best.steps, faults };
    }
    return best;
  } finally {
    await store.close();
  }
}

/** A failure with its shrunk form, as printed. */
export function describeShrunk(s: Shrunk): string {
  return `shrunk to ${s.steps} steps, faults ${s.faults.join(",") || "none"}:\n${describeFailure(s.report, s.steps, s.faults)}`;
}
