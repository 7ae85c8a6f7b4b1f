/**
 * The invariant `operator-actions` (see docs/testing.md): a run leaves a finished or
 * blocked state only through a restart or a skip the operator asked for, and then exactly
 * as asked: a restart from `from` keeps the entries before it unchanged and drops the
 * rest; a skip drops only the entry the run was blocked at and moves the later ones down
 * by one, unchanged. A fork starts with the source's entries before `from`, unchanged.
 */
import { Violation } from "./violation.js";
import type { WfEntry, WfRun } from "./wf-rows.js";

/** A restart or skip the operator asked for, not yet seen committed (or refused). */
export type OperatorAsk = { kind: "restart"; from: number } | { kind: "skip" };

/** What the operator asked, for the checker. */
export interface OperatorObservations {
  /** Per run, the restarts and skips asked and not yet seen. */
  asks: Map<string, OperatorAsk[]>;
  /** Per fork id (given by the operator), its source and `from`. */
  forks: Map<string, { source: string; from: number }>;
  /** Per run, how many times a restart or skip was seen committed. */
  reopens: Map<string, number>;
}

/** What the checker knew of an entry. */
export type EntryFacts = Pick<WfEntry, "kind" | "name" | "state" | "outcome" | "workId" | "childId">;

/** How many restarts, skips and forks were seen committed. */
export interface Operated {
  restarts: number;
  skips: number;
  forks: number;
}

/** How an asked action moved a run's journal. */
export type Reopen = { kind: "restart"; from: number } | { kind: "skip"; n: number };

const FINISHED = new Set(["success", "failed", "canceled"]);

/** The facts of an entry read. */
export function factsOf(e: WfEntry): EntryFacts {
  return { kind: e.kind, name: e.name, state: e.state, outcome: e.outcome, workId: e.workId, childId: e.childId };
}

function same(a: EntryFacts | undefined, b: EntryFacts | undefined): boolean {
  return (
    a !== undefined &&
    b !== undefined &&
    a.kind === b.kind &&
    a.name === b.name &&
    a.state === b.state &&
    a.outcome === b.outcome &&
    a.workId === b.workId &&
    a.childId === b.childId
  );
}

/**
 * The asked action that moved `run` (last read as `last`, with `before` its entries then)
 * out of a finished or blocked state, taken from the asks; null when the run did not leave
 * one. A run that left one with no asked action that explains its journal breaks the
 * invariant (or, with nothing asked at all, run-final or no-step-beyond-mismatch).
 */
export function reopenOf(
  run: WfRun,
  own: readonly WfEntry[],
  last: WfRun,
  before: ReadonlyMap<number, EntryFacts>,
  asks: OperatorAsk[] | undefined,
  runLabel: string,
): Reopen | null {
  const left = FINISHED.has(last.state) ? !FINISHED.has(run.state) : last.state === "blocked" && run.state === "running";
  if (!left) return null;
  const name = `run ${runLabel}`;
  const moved = `${name} went from ${last.state} to ${run.state} with ${own.length} of its ${before.size} entries`;
  // Nothing asked: it is the run's own end or block that did not hold.
  if (!asks?.length) throw new Violation(FINISHED.has(last.state) ? "run-final" : "no-step-beyond-mismatch", `${moved}, unasked`);
  if (run.state !== "running") throw new Violation("operator-actions", `${moved}; a restart or a skip leaves it running`);
  // Entries by their position: a journal with a hole fits no action.
  const now = own.every((e, i) => e.n === i) ? own.map(factsOf) : [];
  const blockedAt = last.state === "blocked" && last.blocked !== null ? (JSON.parse(last.blocked) as { n: number }).n : null;
  for (const [i, ask] of asks.entries()) {
    let fits: boolean;
    if (now.length !== own.length) fits = false;
    else if (ask.kind === "restart") {
      fits = now.length === ask.from && now.every((e, n) => same(e, before.get(n)));
    } else {
      const n = blockedAt;
      fits = n !== null && now.length === before.size - 1 && now.every((e, m) => same(e, before.get(m < n ? m : m + 1)));
    }
    if (!fits) continue;
    asks.splice(i, 1);
    return ask.kind === "restart" ? { kind: "restart", from: ask.from } : { kind: "skip", n: blockedAt! };
  }
  const asked = asks.map((a) => (a.kind === "restart" ? `restart from ${a.from}` : "skip")).join(", ");
  throw new Violation("operator-actions", `${moved}, which no action asked (${asked}) makes`);
}

/** A fork's journal, when first read, is its source's entries before `from`, unchanged. */
export function checkFork(
  fork: { source: string; from: number },
  own: readonly WfEntry[],
  source: readonly WfEntry[] | undefined,
  runLabel: string,
): void {
  if (!source) return;
  const want = source.filter((e) => e.n < fork.from).map(factsOf);
  const got = own.map(factsOf);
  if (own.some((e, i) => e.n !== i)) throw new Violation("operator-actions", `fork ${runLabel}'s journal has a hole`);
  const bad = got.findIndex((e, n) => !same(e, want[n]));
  if (got.length !== want.length || bad !== -1) {
    throw new Violation(
      "operator-actions",
      `fork ${runLabel} has ${got.length} entries for its source's ${want.length} before ${fork.from}${bad === -1 ? "" : `, differing at ${bad}`}`,
    );
  }
}

/** A run's known entries as a restart or skip left them. */
export function entriesAfter(entries: ReadonlyMap<number, EntryFacts>, how: Reopen): Map<number, EntryFacts> {
  const out = new Map<number, EntryFacts>();
  for (const [n, e] of entries) {
    if (how.kind === "restart" && n < how.from) out.set(n, e);
    if (how.kind === "skip" && n !== how.n) out.set(n < how.n ? n : n - 1, e);
  }
  return out;
}

/** The onComplete kinds committed since a restart or skip: `all` without one of each of `before`. */
export function ocsSince(all: readonly string[], before: readonly string[]): string[] {
  const rest = [...all];
  for (const g of before) {
    const i = rest.indexOf(g);
    if (i >= 0) rest.splice(i, 1);
  }
  return rest;
}
