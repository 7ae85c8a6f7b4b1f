/**
 * The step API a workflow function receives: each method checks its input (a bad call
 * rejects at once and takes no place in the journal), then becomes the next numbered call
 * of the execution.
 */
import { randomUUID } from "node:crypto";
import { checkInt, checkName, checkOptionKeys, optionKeys } from "../checks.js";
import type { HandlerRegistry, ActionHandle, MutationHandle } from "../handlers.js";
import { checkKey, MAX_PRIORITY, MIN_PRIORITY } from "../internal/enqueue-input.js";
import { InvalidArgumentError } from "../errors.js";
import { encodeJson } from "../json.js";
import { checkRetryBehavior, YEAR } from "../options.js";
import type { JsonValue } from "../types.js";
import type { Execution, StepRequest } from "./execution.js";
import { checkMapInput, noteCall, runMap } from "./map.js";
import type { ActionStepOptions, EventResult, MapItemResult, MapOptions, WorkflowHandle, WorkflowStep, WorkStepOptions } from "./types.js";
import { checkEventName } from "./validate.js";
import { checkPatchId, deprecatePatch, patched } from "./patches.js";

const WORK_STEP_KEYS = optionKeys<WorkStepOptions>()({ name: true, timeoutMs: true, key: true, priority: true, runAfter: true });
const ACTION_STEP_KEYS = optionKeys<ActionStepOptions>()({
  name: true,
  timeoutMs: true,
  key: true,
  priority: true,
  runAfter: true,
  retry: true,
});
const EVENT_KEYS = optionKeys<{ timeoutMs?: number }>()({ timeoutMs: true });
const WEEK_MS = 7 * 24 * 3600 * 1000;

/** What the step API needs from its manager. */
export interface StepHost {
  readonly handlers: Pick<HandlerRegistry<unknown>, "checkHandle">;
  /** The name of a workflow handle this manager defined, or an error. */
  workflowName(field: string, handle: unknown): string;
  now(): number;
  random(): number;
}

/** The step API of one execution. */
export class Step<P extends string = string> implements WorkflowStep<P> {
  constructor(
    readonly workflowId: string,
    private readonly exec: Execution,
    private readonly host: StepHost,
  ) {}

  runAction<A, R>(handle: ActionHandle<A, R, P>, args: A, options?: ActionStepOptions): Promise<R> {
    return this.request(() => this.workRequest("action", handle, args, options)) as Promise<R>;
  }

  runMutation<A, R>(handle: MutationHandle<A, R, P>, args: A, options?: WorkStepOptions): Promise<R> {
    return this.request(() => this.workRequest("mutation", handle, args, options)) as Promise<R>;
  }

  sleep(ms: number): Promise<void> {
    return this.request(() => ({ kind: "sleep", ms: checkInt("ms", ms, 0, YEAR) })) as Promise<void>;
  }

  awaitEvent<T = JsonValue>(name: string, options?: { timeoutMs?: number }): Promise<EventResult<T>> {
    return this.request(() => {
      const o = options === undefined ? {} : checkOptionKeys("options", options, EVENT_KEYS, "step.awaitEvent()");
      const timeoutMs = o.timeoutMs === undefined ? null : checkInt("options.timeoutMs", o.timeoutMs, 0, YEAR);
      return { kind: "event", name: checkEventName("name", name), timeoutMs };
    }) as Promise<EventResult<T>>;
  }

  runWorkflow<A, R>(handle: WorkflowHandle<A, R, P>, args: A): Promise<R> {
    return this.request(() => ({
      kind: "workflow",
      workflow: this.host.workflowName("handle", handle),
      args: encodeJson("args", args),
    })) as Promise<R>;
  }

  map<T, R>(
    items: readonly T[],
    fn: (item: T, index: number) => R | PromiseLike<R>,
    options?: MapOptions & { onFailure?: "fail-fast" },
  ): Promise<Awaited<R>[]>;
  map<T, R>(
    items: readonly T[],
    fn: (item: T, index: number) => R | PromiseLike<R>,
    options: MapOptions & { onFailure: "collect" },
  ): Promise<MapItemResult<Awaited<R>>[]>;
  map<T, R>(
    items: readonly T[],
    fn: (item: T, index: number) => R | PromiseLike<R>,
    options: MapOptions & { onFailure: "ignore" },
  ): Promise<(Awaited<R> | undefined)[]>;
  map<T, R>(items: readonly T[], fn: (item: T, index: number) => R | PromiseLike<R>, options?: MapOptions): Promise<unknown[]>;
  map<T, R>(items: readonly T[], fn: (item: T, index: number) => R | PromiseLike<R>, options?: MapOptions): Promise<unknown[]> {
    try {
      this.checkInside();
      return runMap(this.exec, checkMapInput<T, R>(items, fn, options));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  now(): number {
    return this.value("now") as number;
  }

  random(): number {
    return this.value("random") as number;
  }

  uuid(): string {
    return this.value("uuid") as string;
  }

  patched(id: string): boolean {
    this.checkInside();
    return patched(this.exec, checkPatchId("id", id));
  }

  deprecatePatch(id: string): void {
    this.checkInside();
    deprecatePatch(this.exec, checkPatchId("id", id));
  }

  private value(name: "now" | "random" | "uuid"): JsonValue {
    this.checkInside();
    const value = this.exec.value(name);
    void this.exec.call({ kind: "value", name, value });
    return value;
  }

  /** A checked call: invalid input rejects without taking a place in the journal. */
  private request(build: () => StepRequest): Promise<unknown> {
    let request: StepRequest;
    try {
      this.checkInside();
      request = build();
    } catch (e) {
      return Promise.reject(e);
    }
    const made = this.exec.calls.length;
    const promise = this.exec.call(request);
    const call = this.exec.calls[made];
    if (call) noteCall(this.exec, call);
    return promise;
  }

  /** Step calls come from the workflow function (or what it started), never from other code holding `step`. */
  private checkInside(): void {
    if (!this.exec.inside && this.exec.ending === null) {
      throw new InvalidArgumentError("step", "was called from outside its workflow function; call steps only from the function's own code");
    }
  }

  private workRequest(kind: "action" | "mutation", handle: unknown, args: unknown, options: unknown): StepRequest {
    const handler = this.host.handlers.checkHandle("handle", handle, kind);
    const what = `step.run${kind === "action" ? "Action" : "Mutation"}()`;
    const o: Record<string, unknown> =
      options === undefined ? {} : checkOptionKeys("options", options, kind === "action" ? ACTION_STEP_KEYS : WORK_STEP_KEYS, what);
    const checked: Record<string, unknown> = {};
    if (o.name !== undefined) checked.name = checkName("options.name", o.name, 200);
    if (o.timeoutMs !== undefined) checked.timeoutMs = checkInt("options.timeoutMs", o.timeoutMs, 1, WEEK_MS);
    if (o.key !== undefined) checked.key = checkKey("options.key", o.key);
    if (o.priority !== undefined) checked.priority = checkInt("options.priority", o.priority, MIN_PRIORITY, MAX_PRIORITY);
    if (o.runAfter !== undefined) checked.runAfter = checkInt("options.runAfter", o.runAfter, 0, YEAR);
    if (o.retry !== undefined) checked.retry = typeof o.retry === "boolean" ? o.retry : checkRetryBehavior("options.retry", o.retry);
    return { kind, handle, handler, args: encodeJson("args", args), options: checked };
  }
}

/** Makes the value of a now/random/uuid call the journal does not have yet. */
export function freshValue(host: Pick<StepHost, "now" | "random">, name: "now" | "random" | "uuid"): JsonValue {
  if (name === "now") return host.now();
  if (name === "random") return host.random();
  return randomUUID();
}
