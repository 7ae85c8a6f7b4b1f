/**
 * The workflows of a simulated process: a WorkflowManager on its pool with one definition
 * per shape (wf-shapes.ts), whose function runs the shape's steps with the simulated
 * workload's action and mutation (a map's items with an action of the map's own name), a clean-up mutation for `finally`, and the workflow
 * onComplete mutation that writes a `sim_oc` row (keyed by the run's id).
 */
import type { MutationHandle, Workpool } from "../../src/index.js";
import { StepFailedError, WorkflowManager, type WorkflowHandle, type WorkflowOnCompleteArgs } from "../../src/workflow/index.js";
import type { MapOptions, WorkflowStep } from "../../src/workflow/types.js";
import type { SimStore } from "./stores.js";
import { Violation } from "./violation.js";
import { CLEANUP, type WfOp, type WfShape } from "./wf-shapes.js";
import type { defineWorkload, WorkArgs } from "./workload.js";

/** The context a run's onComplete is given: how many of its tries throw (after writing, so the savepoint must roll back). */
export interface WfOcContext {
  t: number;
}

/** What the workflow handlers report to the simulator. */
export interface WfHooks {
  store: SimStore;
  pool: string;
  /** Bumped by every step call and settlement: a replay runs over several turns of the event loop, and the scheduler waits for it. */
  activity(): void;
  /** Tries of each run's onComplete so far (tries that threw roll back, so they live here). */
  ocTries: Map<string, number>;
  /** The version this process defines its workflows at (null: none), and whether their runs are pinned to it. */
  version: string | null;
  pinned: boolean;
  /** Reports a broken invariant seen inside a workflow's function. */
  broke(v: Violation): void;
}

/** One process's workflows. */
export interface SimWorkflows {
  manager: WorkflowManager<unknown>;
  /** The handle of each shape, by index. */
  handles: WorkflowHandle<RunArgs, unknown>[];
  /** The runs' onComplete mutation. */
  onComplete: MutationHandle<WorkflowOnCompleteArgs<WfOcContext>, null>;
  /** The args a run started here is given: the version that starts it, so its function can tell (null without versions). */
  args: RunArgs;
  /** The version this process defines (null: none). */
  version: string | null;
}

/** A run's args: `v`, the version of the code that started it. */
export type RunArgs = { v: string } | null;

/** Defines the run's workflows on one process's pool, with `shapes` (the run's, or a changed copy). */
export function defineWorkflows(
  pool: Workpool<unknown>,
  work: ReturnType<typeof defineWorkload>,
  shapes: readonly WfShape[],
  hooks: WfHooks,
): SimWorkflows {
  const manager = new WorkflowManager(pool);
  const clean = pool.defineMutation(CLEANUP, async (ctx) => {
    await hooks.store.writeApp(ctx.tx, hooks.pool, ctx.workId);
    return null;
  });
  const onComplete = pool.defineMutation("wfdone", async (ctx, { workflowId, context, result }: WorkflowOnCompleteArgs<WfOcContext>) => {
    await hooks.store.writeOc(ctx.tx, hooks.pool, workflowId, result.kind);
    const tries = hooks.ocTries.get(workflowId) ?? 0;
    if (tries < context.t) {
      hooks.ocTries.set(workflowId, tries + 1);
      throw new Error("sim workflow onComplete failure");
    }
    return null;
  });
  const mapActs = new Map<string, ReturnType<typeof work.defineAct>>();
  for (const op of shapes.flatMap((sh) => sh.body)) if (op.k === "map" && !mapActs.has(op.id)) mapActs.set(op.id, work.defineAct(op.id));
  const handles: WorkflowHandle<RunArgs, unknown>[] = [];
  const args: RunArgs = hooks.version === null ? null : { v: hooks.version };
  const versioned = hooks.version === null ? {} : { version: hooks.version, pinVersion: hooks.pinned };
  for (const shape of shapes) {
    handles.push(
      manager.define(
        shape.name,
        async (raw: WorkflowStep, started: RunArgs) => {
          // pinned-version: a pinned run's function runs only where its version is defined.
          if (hooks.pinned && started !== null && started.v !== hooks.version) {
            hooks.broke(
              new Violation("pinned-version", `run ${raw.workflowId} of ${started.v} ran its function in a process of ${hooks.version}`),
            );
          }
          const step = tracked(raw, hooks.activity);
          const out: unknown[] = [];
          try {
            for (const op of shape.body) out.push(await caught(op, () => runOp(step, op)));
            return out;
          } finally {
            if (shape.cleanup) await step.runMutation(clean, { b: "mok" } satisfies WorkArgs);
          }
        },
        { ...versioned, ...(shape.timeoutMs === null ? {} : { timeoutMs: shape.timeoutMs }) },
      ),
    );
  }

  function runOp(step: WorkflowStep, op: WfOp): Promise<unknown> {
    switch (op.k) {
      case "act":
        return step.runAction(work.act, op.args, {
          ...(op.timeoutMs === undefined ? {} : { timeoutMs: op.timeoutMs }),
          ...(op.retry ? { retry: true } : {}),
        });
      case "mut":
        return step.runMutation(work.mut, op.args);
      case "all":
        return Promise.all(op.ops.map((o) => runOp(step, o)));
      case "sleep":
        return step.sleep(op.ms).then(() => null);
      case "event":
        return step.awaitEvent(op.name, op.timeoutMs === null ? undefined : { timeoutMs: op.timeoutMs });
      case "child":
        return step.runWorkflow(handles[op.shape]!, args);
      case "value":
        return Promise.resolve(op.which === "now" ? step.now() : op.which === "random" ? step.random() : step.uuid());
      case "map": {
        const act = mapActs.get(op.id)!;
        return step.map(
          op.items,
          (item) => step.runAction(act, item.args, item.timeoutMs === undefined ? {} : { timeoutMs: item.timeoutMs }),
          { concurrency: op.concurrency, onFailure: op.onFailure },
        );
      }
      case "patch":
        return step.patched(op.id) ? runOp(step, op.op) : Promise.resolve(null);
      case "deprecate":
        step.deprecatePatch(op.id);
        return runOp(step, op.op);
    }
  }

  return { manager, handles, onComplete, args, version: hooks.version };
}

/** A step whose failure (a StepFailedError, never a cancel) the shape catches gives "failed" instead. */
async function caught(op: WfOp, run: () => Promise<unknown>): Promise<unknown> {
  try {
    return await run();
  } catch (e) {
    if ("catch" in op && op.catch && e instanceof StepFailedError) return "failed";
    throw e;
  }
}

/** `step` with every call and every settlement of a call bumping the scheduler's activity. */
function tracked(step: WorkflowStep, bump: () => void): WorkflowStep {
  const follow = <T>(p: Promise<T>): Promise<T> => {
    bump();
    return p.then(
      (v) => {
        bump();
        return v;
      },
      (e: unknown) => {
        bump();
        throw e;
      },
    );
  };
  return {
    workflowId: step.workflowId,
    runAction: (h, a, o) => follow(step.runAction(h, a, o)),
    runMutation: (h, a, o) => follow(step.runMutation(h, a, o)),
    sleep: (ms) => follow(step.sleep(ms)),
    awaitEvent: (n, o) => follow(step.awaitEvent(n, o)),
    runWorkflow: (h, a) => follow(step.runWorkflow(h, a)),
    map: ((items: readonly unknown[], fn: (item: unknown, i: number) => unknown, o?: MapOptions) =>
      follow(step.map(items, fn, o))) as WorkflowStep["map"],
    now: () => (bump(), step.now()),
    random: () => (bump(), step.random()),
    uuid: () => (bump(), step.uuid()),
    patched: (id) => (bump(), step.patched(id)),
    deprecatePatch: (id) => (bump(), step.deprecatePatch(id)),
  };
}
