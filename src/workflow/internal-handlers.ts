/**
 * The pool handlers that drive runs, defined once per pool by its WorkflowManager under
 * reserved names: they are ordinary work of the pool, so every limit, retry, lease and
 * exactly-once guarantee of the pool is theirs.
 */
import type { Driver } from "../driver/driver.js";
import type { ActionFn, ActionHandle, HandlerRegistry, MutationFn, MutationHandle, OnCompleteFn, OnCompleteHandle } from "../handlers.js";
import { advance } from "./advance.js";
import { continueHere } from "./continue.js";
import { enqueueAdvance, opsOn, andThen, type Engine, type InternalHandles, type RunRef, type StepRef } from "./engine.js";
import { cancelRun, deliverRunOnComplete, finishRun } from "./finish.js";
import { workOutcome } from "./outcomes.js";
import { ADVANCE_DONE_HANDLER, ADVANCE_HANDLER, CANCEL_HANDLER, INTERNAL_PREFIX, RUN_TIMEOUT_HANDLER } from "./run-work.js";
import type { WorkflowResult } from "./types.js";

export { CANCEL_HANDLER, INTERNAL_PREFIX } from "./run-work.js";

/** Defines the internal handlers in a pool's `registry`; `engine` is read when they run. */
export function defineInternalHandlers<Tx>(registry: HandlerRegistry<Tx>, driver: Driver<Tx>, engine: () => Engine<Tx>): InternalHandles {
  const now = (): number => engine().rt.options.clock.now();
  const pool = {
    defineAction: <A, R>(name: string, fn: ActionFn<A, R>) => registry.define<ActionHandle<A, R>>("action", name, fn, true),
    defineMutation: <A, R>(name: string, fn: MutationFn<Tx, A, R>) => registry.define<MutationHandle<A, R>>("mutation", name, fn, true),
    defineOnComplete: <C, R>(name: string, fn: OnCompleteFn<Tx, C, R>) =>
      registry.define<OnCompleteHandle<C, R>>("onComplete", name, fn, true),
  };
  return {
    advance: pool.defineAction(ADVANCE_HANDLER, async (_ctx, { r }: RunRef) => {
      await advance(engine(), r);
      return null;
    }),
    stepDone: pool.defineOnComplete<StepRef, unknown>(`${INTERNAL_PREFIX}step-done`, async (ctx, { context, result }) => {
      const { state, outcome } = workOutcome(result);
      // A step the run's cancel already ended keeps that end: its late result is ignored.
      if (!(await driver.workflows(ctx.tx).endStep(context.r, context.n, state, JSON.stringify(outcome), now(), ctx.workId))) return;
      // The run goes on here when this process keeps it (a savepoint of this transaction); else an advance does it.
      const continued = await driver
        .transaction((ops) => continueHere(engine(), ops, context.r, context.n, outcome))
        .catch((e: unknown) => {
          engine().rt.logger.warn(`workpool: workflow run ${context.r} could not go on after step ${context.n}; an advance will`, e);
          return false;
        });
      if (!continued) await enqueueAdvance(engine(), ctx.tx, context.r);
    }),
    advanceDone: pool.defineOnComplete<RunRef, unknown>(ADVANCE_DONE_HANDLER, async (_ctx, { context, result }) => {
      if (result.kind !== "failed") return;
      // Every try of the run's advance failed: the run ends failed rather than waiting for good.
      await driver.transaction(async (ops) => {
        const run = await opsOn(engine(), ops.tx).lockRun(context.r);
        if (!run || (run.state !== "running" && run.state !== "canceling")) return;
        await finishRun(engine(), ops, run, { kind: "failed", error: `the workflow could not be advanced: ${result.error}` }, now(), null);
      });
    }),
    sleep: pool.defineAction(`${INTERNAL_PREFIX}sleep`, () => null),
    eventTimeout: pool.defineMutation(`${INTERNAL_PREFIX}event-timeout`, (ctx, { r, n }: StepRef) =>
      andThen(driver.workflows(ctx.tx).endStep(r, n, "done", JSON.stringify({ kind: "timeout" }), now(), ctx.workId), (ended) =>
        ended ? enqueueAdvance(engine(), ctx.tx, r).then(() => null) : null,
      ),
    ),
    runTimeout: pool.defineMutation(RUN_TIMEOUT_HANDLER, async (_ctx, { r }: RunRef) => {
      await driver.transaction(async (ops) => {
        // A restart gives the run a new deadline: the timeout of its earlier one does nothing.
        const run = await opsOn(engine(), ops.tx).lockRun(r);
        if (run?.deadline != null && run.deadline <= now()) await cancelRun(engine(), ops, r, "timeout", now());
      });
      return null;
    }),
    cancel: pool.defineMutation(CANCEL_HANDLER, async (_ctx, { r }: RunRef) => {
      await driver.transaction((ops) => cancelRun(engine(), ops, r, "cancel", now()));
      return null;
    }),
    deliverOnComplete: pool.defineMutation(`${INTERNAL_PREFIX}on-complete`, async (_ctx, { r }: RunRef) => {
      await driver.transaction(async (ops) => {
        const run = await opsOn(engine(), ops.tx).lockRun(r);
        if (!run || run.ocState !== "pending" || run.result === null) return;
        await deliverRunOnComplete(engine(), ops, run, JSON.parse(run.result) as WorkflowResult<unknown>, now());
      });
      return null;
    }),
  };
}
