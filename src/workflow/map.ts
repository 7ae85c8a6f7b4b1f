/**
 * step.map(): a callback of step calls per item, at most `concurrency` of them in flight
 * (when one ends the next starts), results in item order. It is ordinary code of the
 * workflow function built on step calls, so it replays like the rest: the window moves as
 * outcomes are given back, in the rounds they were first given. Failing fast ends the
 * in-flight items' open steps through the execution (Execution.endCalls), so the end is
 * journaled, their work is canceled, and a replay ends them again at the same point.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { checkInt, checkOptionKeys, describeValue, optionKeys } from "../checks.js";
import { InvalidArgumentError } from "../errors.js";
import { WorkflowCanceledError } from "./errors.js";
import type { Execution, StepCall } from "./execution.js";
import type { MapFailureMode, MapItemResult, MapOptions } from "./types.js";

/** Most items one map takes. */
export const MAX_MAP_ITEMS = 100_000;
/** Most items one map keeps in flight. */
export const MAX_MAP_CONCURRENCY = 10_000;
const DEFAULT_CONCURRENCY = 10;
const MODES: readonly MapFailureMode[] = ["fail-fast", "collect", "ignore"];
const MAP_KEYS = optionKeys<MapOptions>()({ concurrency: true, onFailure: true });

/** The step calls one in-flight item made (with those of maps nested in it), and whether it was ended. */
interface ItemScope {
  readonly parent: ItemScope | null;
  calls: StepCall[];
  /** Set when a failing map ended the item: steps it calls from then on end at once. */
  endedBy: string | null;
}

/** The item whose callback the current async context belongs to. */
const items = new AsyncLocalStorage<ItemScope>();

/** A map's input, checked: invalid input rejects before any item starts. */
export interface MapInput<T, R> {
  items: readonly T[];
  fn: (item: T, index: number) => R | PromiseLike<R>;
  concurrency: number;
  onFailure: MapFailureMode;
}

/** Checks step.map()'s arguments; throws InvalidArgumentError naming the field. */
export function checkMapInput<T, R>(list: unknown, fn: unknown, options: unknown): MapInput<T, R> {
  if (!Array.isArray(list)) throw new InvalidArgumentError("items", `must be an array, got ${describeValue(list)}`);
  if (list.length > MAX_MAP_ITEMS)
    throw new InvalidArgumentError("items", `must have at most ${MAX_MAP_ITEMS} items, got ${list.length}; split the work over child runs`);
  if (typeof fn !== "function")
    throw new InvalidArgumentError("fn", `must be a function (item, index) => step calls, got ${describeValue(fn)}`);
  const o = (options === undefined ? {} : checkOptionKeys("options", options, MAP_KEYS, "step.map()")) as MapOptions;
  const concurrency =
    o.concurrency === undefined ? DEFAULT_CONCURRENCY : checkInt("options.concurrency", o.concurrency, 1, MAX_MAP_CONCURRENCY);
  const onFailure = o.onFailure ?? "fail-fast";
  if (!MODES.includes(onFailure))
    throw new InvalidArgumentError("options.onFailure", `must be one of ${MODES.join(", ")}, got ${describeValue(o.onFailure)}`);
  return { items: list as readonly T[], fn: fn as MapInput<T, R>["fn"], concurrency, onFailure };
}

/**
 * Notes a step call just made: it belongs to the in-flight item (and the items of outer
 * maps) whose callback made it; made by an item its map ended, it ends at once.
 */
export function noteCall(exec: Execution, call: StepCall): void {
  const scope = items.getStore();
  if (!scope || call.settled) return;
  let endedBy: string | null = null;
  for (let s: ItemScope | null = scope; s; s = s.parent) {
    // Drop settled calls now and then: a long-lived outer item would keep every call of its inner maps.
    if (s.calls.length >= 64 && s.calls.length % 64 === 0) s.calls = s.calls.filter((c) => !c.settled);
    s.calls.push(call);
    endedBy ??= s.endedBy;
  }
  if (endedBy !== null) exec.endCalls([call], { kind: "canceled", byCode: true, message: endedBy });
}

/** Runs `input`'s items through its callback, as the workflow function's own code. */
export function runMap<T, R>(exec: Execution, input: MapInput<T, R>): Promise<unknown[]> {
  const { fn, concurrency, onFailure } = input;
  const list = input.items;
  const parent = items.getStore() ?? null;
  return new Promise<unknown[]>((resolve, reject) => {
    // Filled, not sparse: a failed item of an "ignore" map is `undefined` in its place.
    const results: unknown[] = new Array<unknown>(list.length).fill(undefined);
    const inFlight = new Map<number, ItemScope>();
    let next = 0;
    let over = false;

    const ended = (i: number, outcome: MapItemResult<Awaited<R>>): void => {
      if (over) return;
      inFlight.delete(i);
      if (!outcome.ok && outcome.error instanceof WorkflowCanceledError) {
        // The run is being canceled: its cancel already ended every open step.
        over = true;
        reject(outcome.error);
        return;
      }
      if (!outcome.ok && onFailure === "fail-fast") {
        over = true;
        const message = `canceled: item ${i} of its step.map failed`;
        for (const scope of inFlight.values()) {
          scope.endedBy = message;
          exec.endCalls(scope.calls, { kind: "canceled", byCode: true, message });
        }
        inFlight.clear();
        reject(outcome.error);
        return;
      }
      if (onFailure === "collect") results[i] = outcome;
      else if (outcome.ok) results[i] = outcome.value;
      startMore();
    };

    const startMore = (): void => {
      while (!over && inFlight.size < concurrency && next < list.length) {
        const i = next++;
        const scope: ItemScope = { parent, calls: [], endedBy: null };
        inFlight.set(i, scope);
        let result: Promise<Awaited<R>>;
        try {
          result = Promise.resolve(items.run(scope, () => fn(list[i] as T, i)));
        } catch (e) {
          result = Promise.reject(e);
        }
        result.then(
          (value) => ended(i, { ok: true, value }),
          (error: unknown) => ended(i, { ok: false, error }),
        );
      }
      if (!over && inFlight.size === 0 && next >= list.length) {
        over = true;
        resolve(results);
      }
    };

    startMore();
  });
}
