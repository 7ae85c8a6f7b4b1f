/**
 * `npm run sim`: runs the simulator by hand.
 *
 *   npm run sim -- --seeds 100000 [--store sqlite|postgres] [--seed S] [--workflows some|always|never]
 *   npm run sim -- --seed 12345 [--store sqlite] [--steps 20] [--faults crashAfter,failBefore|none]
 *
 * With --seed alone it replays that one seed and prints its trace; with --seeds it runs
 * that many seeds from --seed (default: a random first seed, printed), stops at the first
 * failure and shrinks it.
 */
import { Command, InvalidArgumentError, Option } from "commander";
import { describeShrunk, runBatch, shrink } from "./batch.js";
import { FAULT_KINDS, type FaultKind } from "./faulty-driver.js";
import { describeFailure, runSeed } from "./run.js";
import { createSimStore, type StoreKind } from "./stores.js";
import type { WorkflowMode } from "./wf-run.js";
import { VARIANTS, type Variant } from "./variants.js";
import { WF_VARIANTS } from "./wf-variants.js";

function int(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError("must be an integer >= 0");
  return n;
}

function faultList(value: string): FaultKind[] {
  if (value === "none") return [];
  const list = value.split(",");
  for (const f of list) {
    if (!FAULT_KINDS.includes(f as FaultKind))
      throw new InvalidArgumentError(`unknown fault "${f}"; one of ${FAULT_KINDS.join(", ")} or none`);
  }
  return list as FaultKind[];
}

function variantNamed(value: string): Variant {
  const all = [...VARIANTS, ...WF_VARIANTS];
  const v = all.find((x) => x.name === value);
  if (!v) throw new InvalidArgumentError(`unknown variant "${value}"; one of ${all.map((x) => x.name).join(", ")}`);
  return v;
}

const program = new Command("sim")
  .description("deterministic simulation of workpool: seeded runs with faults, every invariant checked")
  .option("--seeds <n>", "number of seeds to run", int)
  .option("--seed <s>", "the seed to replay, or the first seed of --seeds", int)
  .addOption(new Option("--store <kind>", "the store to run on").choices(["sqlite", "postgres"]).default("sqlite"))
  .option("--steps <n>", "steps of the random phase (replaying a shrunk run)", int)
  .option("--faults <list>", "fault kinds to inject (replaying a shrunk run), comma-separated, or none", faultList)
  .addOption(new Option("--workflows <mode>", "which runs have workflows").choices(["some", "always", "never"]).default("some"))
  .option("--variant <name>", "run a deliberately broken variant (variants.ts, wf-variants.ts)", variantNamed)
  .option("--no-shrink", "do not shrink a failing seed")
  .option("--keep-going", "run every seed, listing each failing one, instead of stopping at the first");

program.parse();
const o = program.opts<{
  seeds?: number;
  seed?: number;
  store: StoreKind;
  steps?: number;
  faults?: FaultKind[];
  workflows: WorkflowMode;
  variant?: Variant;
  shrink: boolean;
  keepGoing?: boolean;
}>();
const workflows = o.workflows === "some" ? undefined : o.workflows;

async function main(): Promise<number> {
  if (o.seeds === undefined) {
    const seed = o.seed ?? Math.floor(Math.random() * 1_000_000_000);
    const store = await createSimStore(o.store);
    try {
      const r = await runSeed({ seed, store, steps: o.steps, faults: o.faults, traceLines: 5000, workflows, variant: o.variant });
      if (!r.ok) {
        console.log(describeFailure(r, o.steps, o.faults));
        return 1;
      }
      console.log(
        [
          `seed ${seed} (${o.store}): ok, ${r.steps} steps, ${r.works} works, ${r.runs} workflow runs (${r.blocked} blocked; ${r.operated.restarts} restarts, ${r.operated.skips} skips, ${r.operated.forks} forks), ${r.faults} faults, ${r.crashes} crashes`,
          ...r.trace.map((l) => `  ${l}`),
        ].join("\n"),
      );
      return 0;
    } finally {
      await store.close();
    }
  }
  const first = o.seed ?? Math.floor(Math.random() * 1_000_000_000);
  console.log(`sim: ${o.seeds} seeds on ${o.store} from seed ${first}`);
  let last = performance.now();
  const r = await runBatch({
    store: o.store,
    firstSeed: first,
    seeds: o.seeds,
    workflows,
    variant: o.variant,
    stopAtFailure: !o.keepGoing,
    progress: (done, report) => {
      if (!report.ok && o.keepGoing) console.log(`  seed ${report.seed} broke ${report.invariant}: ${report.message}`);
      if (performance.now() - last < 10_000) return;
      last = performance.now();
      console.log(`  ${done} seeds done`);
    },
  });
  const perSec = r.seeds / (r.ms / 1000);
  console.log(
    `sim: ${r.seeds} seeds (${first}..${first + r.seeds - 1}) on ${o.store} in ${(r.ms / 1000).toFixed(1)} s (${perSec.toFixed(1)} seeds/s): ` +
      `${r.steps} steps, ${r.works} works, ${r.runs} workflow runs (${r.blocked} blocked; ${r.operated.restarts} restarts, ${r.operated.skips} skips, ${r.operated.forks} forks), ${r.faults} faults, ${r.crashes} crashes, ${r.lateResults} late results ignored, ${r.failures.length} failing`,
  );
  const failing = r.failures[0];
  if (!failing) return 0;
  console.log(describeFailure(failing));
  if (o.shrink) console.log(describeShrunk(await shrink(failing, o.variant)));
  return 1;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e);
    process.exit(2);
  },
);
