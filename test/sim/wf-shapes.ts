/**
 * The workflows of a simulated run: a few random shapes drawn from the run's workflow
 * stream, each a list of steps its function calls in order (actions and mutations of the
 * simulated workload, fan-outs, sleeps, event waits, child runs, recorded values), maybe
 * with a clean-up step in `finally` and a run timeout. A shape can be changed (a step
 * inserted), which is how a replacement process gets a definition its runs' journals no
 * longer match.
 */
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
  | { k: "value"; which: "now" | "random" | "uuid" };

/** A workflow definition of the run. */
export interface WfShape {
  name: string;
  body: WfOp[];
  /** Whether `finally` runs the clean-up mutation (CLEANUP). */
  cleanup: boolean;
  /** The run's timeout (define's timeoutMs), or null. */
  timeoutMs: number | null;
}

/** The handler of the clean-up step every shape with `cleanup` calls in `finally`. */
export const CLEANUP = "clean";
/** The event names runs wait for and the client sends. */
export const EVENT_NAMES = ["e1", "e2"] as const;

/** A step call as its journal entry records it: kind and name. */
export interface CallInfo {
  kind: string;
  name: string;
}

/** 1-3 shapes; a later one may run an earlier one as its child. */
export function drawShapes(rng: Rng): WfShape[] {
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
 */
export function changeShapes(shapes: readonly WfShape[], rng: Rng): WfShape[] {
  const i = rng.int(0, shapes.length - 1);
  const shape = shapes[i]!;
  const at = rng.int(0, shape.body.length);
  const next = shape.body[at];
  const which = next?.k === "value" && next.which === "uuid" ? "now" : "uuid";
  const body = [...shape.body.slice(0, at), { k: "value", which } as WfOp, ...shape.body.slice(at)];
  return shapes.map((s, j) => (j === i ? { ...s, body } : s));
}

/** The calls of a body, in the order its function makes them (a fan-out's in branch order). */
export function bodyCalls(shape: WfShape, shapes: readonly WfShape[]): CallInfo[] {
  return shape.body.flatMap((op) => (op.k === "all" ? op.ops : [op]).map((o) => callOf(o, shapes)));
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
    case "all":
      throw new Error("sim: a fan-out has no call of its own");
  }
}

/**
 * Whether a journal (its entries' kinds and names, in order) is one the shape's function
 * makes: a prefix of its body's calls (a failure or a cancel cuts the body short), then its
 * clean-up step if it has one.
 */
export function fitsShape(journal: readonly CallInfo[], shape: WfShape, shapes: readonly WfShape[]): boolean {
  const calls = bodyCalls(shape, shapes);
  let i = 0;
  while (i < journal.length && i < calls.length && same(journal[i]!, calls[i]!)) i++;
  if (i === journal.length) return true;
  return shape.cleanup && i === journal.length - 1 && same(journal[i]!, { kind: "mutation", name: CLEANUP });
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
    }
  };
  return `${s.name}: ${s.body.map(op).join(", ")}${s.cleanup ? ", finally clean" : ""}${s.timeoutMs ? `, timeout ${s.timeoutMs} ms` : ""}`;
}
