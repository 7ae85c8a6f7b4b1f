/**
 * The workflows of one simulated run: whether it has any (a share of runs, drawn from a
 * stream of their own so a run without them is the run its seed made before they
 * existed), their shapes, the changed shapes some replacement processes define, the
 * application's and the operator's workflow calls and the workflow checker.
 */
import type { Workpool } from "../../src/index.js";
import type { defineWorkload } from "./workload.js";
import { Rng } from "./rng.js";
import type { Scheduler } from "./scheduler.js";
import type { Violation } from "./violation.js";
import type { Snapshot } from "./stores.js";
import type { WfRun as RunRow } from "./wf-rows.js";
import { WfClient } from "./wf-client.js";
import { checkWfEnd } from "./wf-events.js";
import { WorkflowChecker, type WfObservations } from "./wf-invariants.js";
import type { Operated } from "./wf-operator-checks.js";
import { changeShapes, describeShape, drawShapes, type WfShape } from "./wf-shapes.js";
import { defineWorkflows, type SimWorkflows } from "./wf-workload.js";

/** Whether a run has workflows: in a share of runs (`some`), in every run, or in none. */
export type WorkflowMode = "some" | "always" | "never";

/** Share of runs with workflows when the mode is `some`. */
const SHARE = 0.2;

/** The workflows of a run that has them. */
export class WfRun {
  readonly shapes: WfShape[];
  /** The shapes with one changed, defined by some processes spawned after a crash; null in most runs. */
  readonly changed: WfShape[] | null;
  readonly obs: WfObservations = {
    cancelAsked: new Set(),
    canceledTrue: new Set(),
    asks: new Map(),
    forks: new Map(),
    reopens: new Map(),
  };
  /**
   * Whether the workflows are versioned and their runs pinned to their version (drawn from
   * a stream of its own, with the extras): processes define v1 (the shapes) or v2 (the
   * changed ones), and a run is driven only where its version is.
   */
  readonly pinned: boolean;
  /** The runs as last read, for the operator to pick from. */
  runs: readonly RunRow[] = [];
  /** Run ids the application may name: those start() resolved with and those the store has. */
  readonly known = new Set<string>();
  readonly client: WfClient;
  private readonly checker: WorkflowChecker;
  private readonly ocTries = new Map<string, number>();
  /** Each run's state and journal length at the last check, for the trace. */
  private readonly seen = new Map<string, string>();

  private constructor(
    private readonly s: Scheduler,
    readonly rng: Rng,
    extra: Rng | null,
    /** The operator's stream: its actions are drawn from it (null: the operator takes none). */
    readonly ops: Rng | null,
    pinned: boolean,
  ) {
    this.shapes = drawShapes(rng, extra);
    this.changed = rng.chance(0.5) ? changeShapes(this.shapes, rng, extra) : null;
    this.pinned = pinned;
    this.checker = new WorkflowChecker(
      this.shapes,
      this.changed,
      (id) => s.trace.label(id),
      (id) => s.trace.runLabel(id),
    );
    this.client = new WfClient(s, this);
  }

  /**
   * The workflows of the run `s` builds from `seed`, or null when it has none; with
   * `extras`, their maps and patches, and the operator's actions, come from streams of their
   * own, so without them the run is the one the seed made before those existed.
   */
  static draw(s: Scheduler, seed: number, mode: WorkflowMode, extras: boolean): WfRun | null {
    const rng = new Rng((seed ^ 0x0f1e2d3c) >>> 0);
    // Drawn in every mode, so `always` runs a seed's workflows as `some` would.
    const drawn = rng.chance(SHARE);
    const extra = extras ? new Rng((seed ^ 0x5a6b7c8d) >>> 0) : null;
    const ops = extras ? new Rng((seed ^ 0x1b2c3d4e) >>> 0) : null;
    const pinned = extras && new Rng((seed ^ 0x7e6d5c4b) >>> 0).chance(0.3);
    return mode === "always" || (mode === "some" && drawn) ? new WfRun(s, rng, extra, ops, pinned) : null;
  }

  /** The trace lines that describe the run's workflows. */
  describe(): string[] {
    return [
      ...this.shapes.map((sh) => `  ${describeShape(sh)}`),
      ...(this.changed ? this.changed.map((sh) => `  changed ${describeShape(sh)}`) : []),
      ...(this.pinned ? ["  runs pinned to their version: v1 (the first shapes) or v2 (the changed ones)"] : []),
    ];
  }

  /**
   * How a new process defines the workflows: a process spawned after a crash in a run with
   * changed shapes defines those seven times in ten (its label says so).
   */
  definer(afterCrash: boolean): {
    changed: boolean;
    define: (pool: Workpool<unknown>, work: ReturnType<typeof defineWorkload>) => SimWorkflows;
  } {
    // With the operator's actions, also some first processes (from its stream): more blocked runs for it to skip.
    const changed = this.changed !== null && ((afterCrash && this.rng.chance(0.7)) || (this.ops?.chance(0.3) ?? false));
    const shapes = changed ? this.changed! : this.shapes;
    const hooks = {
      store: this.s.store,
      pool: this.s.config.pool,
      activity: () => this.s.activity++,
      ocTries: this.ocTries,
      version: this.pinned ? (changed ? "v2" : "v1") : null,
      pinned: this.pinned,
      broke: (v: Violation) => this.s.broke(v),
    };
    return { changed, define: (pool, work) => defineWorkflows(pool, work, shapes, hooks) };
  }

  /**
   * After the drain, in runs with the operator's actions: one to four of them, from live
   * processes, on the runs the drain left. Returns whether it took any.
   */
  operateAfterDrain(): boolean {
    const ops = this.ops;
    if (!ops || !this.runs.length) return false;
    for (let n = ops.int(1, 4); n > 0; n--) this.client.operate(ops.pick(this.s.live()), ops);
    return true;
  }

  /**
   * Whether a parked run waits for a live process of its version to pick it up at its next
   * maintenance tick: the drain goes on (time passes) until none does.
   */
  awaitsPickup(): boolean {
    const live = this.liveVersions();
    return this.runs.some((r) => r.parkedAt !== null && live.has(r.version));
  }

  private liveVersions(): Set<string | null | undefined> {
    return new Set(this.s.live().map((p) => p.wf?.version));
  }

  /** Restarts, skips and forks seen committed. */
  get operated(): Operated {
    return this.checker.operated;
  }

  /** Checks the workflows read with a step's snapshot. */
  check(snapshot: Snapshot): void {
    const wf = snapshot.wf!;
    this.runs = wf.runs;
    const steps = new Map<string, number>();
    for (const e of wf.entries) steps.set(e.runId, (steps.get(e.runId) ?? 0) + 1);
    for (const r of wf.runs) {
      this.known.add(r.id);
      const now = `${r.state}, ${steps.get(r.id) ?? 0} steps`;
      if (this.seen.get(r.id) !== now) this.s.trace.add(`${this.s.head()} run ${this.s.trace.runLabel(r.id)} (${r.name}) ${now}`);
      this.seen.set(r.id, now);
    }
    this.checker.check(wf, snapshot.rows, snapshot.apps, snapshot.ocs, this.obs, this.s.time.now(), this.s.config.retentionMs);
  }

  /** The end of the drain: every run ended, is blocked, or waits for an event never sent. */
  checkEnd(snapshot: Snapshot): void {
    // A pinned run whose version no live process defines waits for one (as documented).
    const live = this.liveVersions();
    checkWfEnd(
      snapshot.wf!,
      (id) => this.s.trace.runLabel(id),
      (run) => run.pinned && !live.has(run.version),
    );
  }
}
