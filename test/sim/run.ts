/**
 * One simulated run: a seed builds 1-4 processes of one pool on a real store, a random
 * workload and a fault schedule; the scheduler (scheduler.ts) steps them and the checker
 * (invariants.ts) checks every step. The same seed always makes the same run.
 */
import type { Operated } from "./wf-operator-checks.js";
import type { FaultKind } from "./faulty-driver.js";
import { FAULT_KINDS } from "./faulty-driver.js";
import { Violation, type InvariantName } from "./invariants.js";
import { Scheduler } from "./scheduler.js";
import type { SimStore } from "./stores.js";
import type { Variant } from "./variants.js";
import type { WorkflowMode } from "./wf-run.js";

/** What to run. */
export interface RunOptions {
  seed: number;
  store: SimStore;
  /** Steps of the random phase before the drain; default from the seed. */
  steps?: number;
  /** Fault kinds that may be injected; default all. */
  faults?: readonly FaultKind[];
  /** Whether processes may crash, stop and restart; default true. */
  processFaults?: boolean;
  /** A deliberately broken driver, for the simulator's own tests. */
  variant?: Variant;
  /** Trace lines kept for the report (default 60). */
  traceLines?: number;
  /** False: no rate limits, whatever the seed draws (a seed found before they were generated). */
  rates?: boolean;
  /** False: no holds and no retries without backoff, whatever the seed draws (a seed found before they were generated). */
  timing?: boolean;
  /**
   * False: workflows without step.map, patches and the operator's actions (a seed found
   * before they were generated). Default: true, but for a variant, its own `extras`.
   */
  extras?: boolean;
  /** Which runs have workflows: `some` (the default: a share drawn from the seed), `always` or `never`. */
  workflows?: WorkflowMode;
  /** Whether the application's actions are batch actions (default false). */
  batchActions?: boolean;
}

/** How a run ended. */
export interface RunReport {
  seed: number;
  store: string;
  steps: number;
  ok: boolean;
  invariant?: InvariantName | "error";
  message?: string;
  /** The last lines of the trace. */
  trace: string[];
  works: number;
  faults: number;
  crashes: number;
  /** Results of attempts no longer current that the pool ignored (fenced). */
  lateResults: number;
  /** The workflow mode it ran with, when not the default. */
  workflows?: WorkflowMode;
  /** Workflow runs it made, and how many of them ended blocked. */
  runs: number;
  blocked: number;
  /** Restarts, skips and forks of its runs seen committed. */
  operated: Operated;
}

/** Runs one seed to its end (or its first violation). */
export async function runSeed(options: RunOptions): Promise<RunReport> {
  const sched = new Scheduler({
    seed: options.seed,
    store: options.store,
    faults: options.faults ?? FAULT_KINDS,
    processFaults: options.processFaults ?? true,
    steps: options.steps,
    variant: options.variant,
    traceLines: options.traceLines,
    rates: options.rates,
    timing: options.timing,
    // A variant runs with the extras only when what it breaks needs them.
    extras: options.extras ?? (options.variant ? (options.variant.extras ?? false) : true),
    workflows: options.workflows,
    batchActions: options.batchActions,
  });
  const restore = options.variant?.patch?.();
  const base = { seed: options.seed, store: options.store.kind, ...(options.workflows ? { workflows: options.workflows } : {}) };
  try {
    await sched.run();
    return { ...base, ok: true, trace: sched.trace.tail(), ...sched.figures() };
  } catch (e) {
    const invariant = e instanceof Violation ? e.invariant : "error";
    const message = e instanceof Error ? e.message : String(e);
    sched.trace.add(`VIOLATION ${message}`);
    return { ...base, ok: false, invariant, message, trace: sched.trace.tail(), ...sched.figures() };
  } finally {
    await sched.dispose();
    restore?.();
  }
}

/** The command that replays a report's seed. */
export function replayCommand(r: RunReport, steps?: number, faults?: readonly FaultKind[]): string {
  let cmd = `npm run sim -- --seed ${r.seed} --store ${r.store}`;
  if (r.workflows && r.workflows !== "some") cmd += ` --workflows ${r.workflows}`;
  if (steps !== undefined) cmd += ` --steps ${steps}`;
  if (faults !== undefined) cmd += ` --faults ${faults.length ? faults.join(",") : "none"}`;
  return cmd;
}

/** A failing report as text: the violation, the replay command and the trace. */
export function describeFailure(r: RunReport, steps?: number, faults?: readonly FaultKind[]): string {
  return [
    `seed ${r.seed} (${r.store}) broke ${r.invariant}: ${r.message}`,
    `replay: ${replayCommand(r, steps, faults)}`,
    "trace (last steps):",
    ...r.trace.map((l) => `  ${l}`),
  ].join("\n");
}
