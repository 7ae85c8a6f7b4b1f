/**
 * The workflows of a simulated run: a few random shapes drawn from the run's workflow
 * stream, each a list of steps its function calls in order (actions and mutations of the
 * simulated workload, fan-outs, step.map()s, patches, sleeps, event waits, child runs,
 * recorded values), maybe with a clean-up step in `finally` and a run timeout. A shape can
 * be changed (a step inserted, or a patch around one), which is how a replacement process
 * gets a definition its runs' journals no longer match (or match through the patch).
 */
import type { MapFailureMode } from "../../src/workflow/types.js";
import type { Rng } from "./rng.js";
import { actionArgs, mutationArgs, type WorkArgs } from "./workload.js";

/** One step of a shape's body. */
export type WfOp =
  | { k: "act"; args: WorkArgs; timeoutMs?: number; retry?: boolean; catch: boolean }
  | { k: "mut"; args: WorkArgs; catch: boolean }
  /** Promise.all of 2-4 single steps (no fan-out or child inside). */
  | { k: "all"; ops: WfOp[]; catch: boolean }
  | { k: "sleep"; ms: number }
  | { k: "event"; name: string; timeoutMs: number | null }
  /** A child run of an earlier shape (by index), so runs never nest for good. */
  | { k: "child"; shape: number; catch: boolean }
  | { k: "value"; which: "now" | "random" | "uuid" }
  /**
   * step.map() over 1-5 items, each one action of the map's own handler (`id`, unique in the
   * run), with a drawn window and failure mode.
   */
  | { k: "map"; id: string; items: MapItem[]; concurrency: number; onFailure: MapFailureMode; catch: boolean }
  /**
   * `if (step.patched(id)) await op`: drawn in a shape the marker and `op` are always
   * journaled; `added` to a changed shape, a run the old code started skips them.
   */
  | { k: "patch"; id: string; op: WfOp; added: boolean }
  /** `step.deprecatePatch(id); await op`: a drawn patch's old path removed (a changed shape's). */
  | { k: "deprecate"; id: string; op: WfOp };

/** One item of a map: its action's args and timeout. */
export interface MapItem {
  args: WorkArgs;
  timeoutMs?: number;
}

/** A workflow definition of the run. */
export interface WfShape {
  name: string;
  body: WfOp[];
  /** Whether `finally` runs the clean-up mutation (CLEANUP). */
  cleanup: boolean;
  /** The run's timeout (define's timeoutMs), or null. */
  timeoutMs: number | null;
}

/** The prefix of a map's handler name (its items' journal entries are actions of that name). */
export const MAP_PREFIX = "map";

/** The handler of the clean-up step every shape with `cleanup` calls in `finally`. */
export const CLEANUP = "clean";
/** The event names runs wait for and the client sends. */
export const EVENT_NAMES = ["e1", "e2"] as const;

/** A step call as its journal entry records it: kind and name. */
export interface CallInfo {
  kind: string;
  name: string;
}

/**
 * 1-3 shapes; a later one may run an earlier one as its child. With `extra` (a stream of
 * its own, so the rest is what the seed drew before maps and patches existed), each shape
 * gets up to two maps or patches, inserted at drawn places.
 */
export function drawShapes(rng: Rng, extra: Rng | null): WfShape[] {
  const count = rng.int(1, 3);
  const shapes: WfShape[] = [];
  for (let i = 0; i < count; i++) {
    const body = Array.from({ length: rng.int(1, 5) }, () => drawOp(rng, i, true));
    shapes.push({
      name: `wf${i}`,
      body,
      cleanup: rng.chance(0.5),
      timeoutMs: rng.chance(0.25) ? rng.int(500, 6000) : null,
    });
  }
  if (!extra) return shapes;
  let maps = 0;
  let patches = 0;
  for (const [i, shape] of shapes.entries()) {
    for (let n = extra.int(0, 2); n > 0; n--) {
      const op: WfOp = extra.chance(0.65)
        ? {
            k: "map",
            id: `${MAP_PREFIX}${maps++}`,
            items: Array.from({ length: extra.int(1, 5) }, () => {
              const args = actionArgs(extra);
              return args.b === "hang" ? { args, timeoutMs: extra.int(100, 800) } : { args };
            }),
            concurrency: extra.int(1, 3),
            onFailure: extra.pick(["fail-fast", "collect", "ignore"] as const),
            catch: extra.chance(0.5),
          }
        : { k: "patch", id: `p${patches++}`, op: drawOp(extra, i, false), added: false };
      shape.body.splice(extra.int(0, shape.body.length), 0, op);
    }
  }
  return shapes;
}

function drawOp(rng: Rng, index: number, top: boolean): WfOp {
  const k = rng.weighted({ act: 5, mut: 2, all: top ? 2 : 0, sleep: 1, event: 2, child: top && index > 0 ? 1 : 0, value: 1 });
  const caught = rng.chance(0.5);
  switch (k) {
    case "act": {
      const args = actionArgs(rng);
      const op: WfOp = { k, args, catch: caught };
      if (args.b === "hang") op.timeoutMs = rng.int(100, 800);
      if (rng.chance(0.5)) op.retry = true;
      return op;
    }
    case "mut":
      return { k, args: mutationArgs(rng), catch: caught };
    case "all":
      return { k, ops: Array.from({ length: rng.int(2, 4) }, () => drawOp(rng, index, false)), catch: caught };
    case "sleep":
      return { k, ms: rng.pick([0, 50, 300, 1500]) };
    case "event":
      return { k, name: rng.pick(EVENT_NAMES), timeoutMs: rng.chance(0.5) ? rng.int(100, 3000) : null };
    case "child":
      return { k, shape: rng.int(0, index - 1), catch: caught };
    default:
      return { k: "value", which: rng.pick(["now", "random", "uuid"] as const) };
  }
}

/**
 * The shapes with one of them changed: a recorded value inserted into its body, of another
 * kind than the step it goes before, so every later step moves one place down the journal.
 * With `extra`, that is one change in three; the others insert a patch (a mutation behind
 * `step.patched`), which a run the old code took past that place skips, or deprecate a
 * drawn patch (`step.deprecatePatch`, then its step), which consumes the marker a run has.
 */
export function changeShapes(shapes: readonly WfShape[], rng: Rng, extra: Rng | null): WfShape[] {
  let i = rng.int(0, shapes.length - 1);
  const at = rng.int(0, shapes[i]!.body.length);
  const patched = shapes.flatMap((sh, j) => (sh.body.some((op) => op.k === "patch") ? [j] : []));
  const how = extra ? extra.weighted({ value: 1, patch: 1, deprecate: patched.length ? 1 : 0 }) : "value";
  if (how === "deprecate") i = extra!.pick(patched);
  const shape = shapes[i]!;
  let body: WfOp[];
  if (how === "deprecate") {
    const patch = shape.body.findIndex((op) => op.k === "patch");
    const op = shape.body[patch] as Extract<WfOp, { k: "patch" }>;
    body = shape.body.map((o, j) => (j === patch ? { k: "deprecate", id: op.id, op: op.op } : o));
  } else {
    const next = shape.body[at];
    const which = next?.k === "value" && next.which === "uuid" ? "now" : "uuid";
    const added: WfOp =
      how === "value"
        ? { k: "value", which }
        : { k: "patch", id: "added", op: { k: "mut", args: { b: "mok" }, catch: false }, added: true };
    body = [...shape.body.slice(0, at), added, ...shape.body.slice(at)];
  }
  return shapes.map((s, j) => (j === i ? { ...s, body } : s));
}

/**
 * What one op of a body may journal: one of `alts`, each a run of calls in order; a patch
 * may also journal nothing where the journal already holds another entry than its marker.
 */
interface Segment {
  alts: CallInfo[][];
  marker?: CallInfo;
}

/** The segments of a body, in the order its function makes the calls (a fan-out's in branch order). */
function bodySegments(shape: WfShape, shapes: readonly WfShape[]): Segment[] {
  return shape.body.flatMap((op): Segment[] => {
    switch (op.k) {
      case "all":
        return op.ops.map((o) => ({ alts: [[callOf(o, shapes)]] }));
      case "map": {
        // All items run, unless a caught fail-fast ends the map early: then at least the first window started.
        const call = { kind: "action", name: op.id };
        const min = op.onFailure === "fail-fast" && op.catch ? Math.min(op.concurrency, op.items.length) : op.items.length;
        const alts: CallInfo[][] = [];
        for (let n = min; n <= op.items.length; n++) alts.push(Array.from({ length: n }, () => call));
        return [{ alts }];
      }
      case "patch": {
        // step.patched() is false where the journal has another entry: a run the code without the patch began.
        const marker = { kind: "patch", name: op.id };
        return [{ alts: [[marker, callOf(op.op, shapes)]], marker }];
      }
      case "deprecate": {
        // A run the patched code started has the marker; one this code started has none.
        const step = callOf(op.op, shapes);
        return [{ alts: [[{ kind: "patch", name: op.id }, step], [step]] }];
      }
      default:
        return [{ alts: [[callOf(op, shapes)]] }];
    }
  });
}

function callOf(op: WfOp, shapes: readonly WfShape[]): CallInfo {
  switch (op.k) {
    case "act":
      return { kind: "action", name: "act" };
    case "mut":
      return { kind: "mutation", name: "mut" };
    case "sleep":
      return { kind: "sleep", name: "sleep" };
    case "event":
      return { kind: "event", name: op.name };
    case "child":
      return { kind: "workflow", name: shapes[op.shape]!.name };
    case "value":
      return { kind: "value", name: op.which };
    default:
      throw new Error(`sim: a ${op.k} op is no single call`);
  }
}

/**
 * Whether a journal (its entries' kinds and names, in order) is one the shape's function
 * makes: a prefix of its body's calls (a failure or a cancel cuts the body short), then its
 * clean-up step if it has one. A map or a patch may journal one of several runs of
 * calls, so every choice is tried.
 */
export function fitsShape(journal: readonly CallInfo[], shape: WfShape, shapes: readonly WfShape[]): boolean {
  const segs = bodySegments(shape, shapes);
  const endsAt = (i: number): boolean =>
    i === journal.length || (shape.cleanup && i === journal.length - 1 && same(journal[i]!, { kind: "mutation", name: CLEANUP }));
  const tried = new Set<string>();
  const from = (i: number, j: number): boolean => {
    if (endsAt(i)) return true;
    if (j === segs.length || tried.has(`${i} ${j}`)) return false;
    tried.add(`${i} ${j}`);
    const { alts, marker } = segs[j]!;
    if (marker && i < journal.length && !same(journal[i]!, marker) && from(i, j + 1)) return true;
    for (const alt of alts) {
      let k = 0;
      while (k < alt.length && i + k < journal.length && same(journal[i + k]!, alt[k]!)) k++;
      if (k === alt.length ? from(i + k, j + 1) : endsAt(i + k)) return true;
    }
    return false;
  };
  return from(0, 0);
}

const same = (a: CallInfo, b: CallInfo): boolean => a.kind === b.kind && a.name === b.name;

/** A shape as one trace line. */
export function describeShape(s: WfShape): string {
  const op = (o: WfOp): string => {
    switch (o.k) {
      case "act":
        return `act(${o.args.b})${o.catch ? "?" : ""}`;
      case "mut":
        return `mut(${o.args.b})${o.catch ? "?" : ""}`;
      case "all":
        return `all[${o.ops.map(op).join(" ")}]${o.catch ? "?" : ""}`;
      case "sleep":
        return `sleep(${o.ms})`;
      case "event":
        return `event(${o.name}${o.timeoutMs === null ? "" : `, ${o.timeoutMs} ms`})`;
      case "child":
        return `child(wf${o.shape})${o.catch ? "?" : ""}`;
      case "value":
        return o.which;
      case "map":
        return `map ${o.id}(${o.items.map((it) => it.args.b).join(" ")}; ${o.concurrency}, ${o.onFailure})${o.catch ? "?" : ""}`;
      case "patch":
        return `patched(${o.id}${o.added ? ", added" : ""})[${op(o.op)}]`;
      case "deprecate":
        return `deprecatePatch(${o.id}), ${op(o.op)}`;
    }
  };
  return `${s.name}: ${s.body.map(op).join(", ")}${s.cleanup ? ", finally clean" : ""}${s.timeoutMs ? `, timeout ${s.timeoutMs} ms` : ""}`;
}
