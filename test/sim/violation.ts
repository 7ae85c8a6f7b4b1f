/**
 * The names of the simulator's invariants and the error a broken one throws. Each
 * violation names its invariant, so the simulator's own tests can tell that a
 * deliberately broken variant was caught by the right one.
 */

/** The names of the invariants. */
export type InvariantName =
  | "finish-once"
  | "right-result"
  | "mutation-once"
  | "on-complete-once"
  | "parallelism"
  | "key-parallelism"
  | "priority-order"
  | "key-turns"
  | "rate-limit"
  | "claim-time"
  | "cancel-final"
  | "fenced"
  | "no-false-loss"
  | "status"
  | "retention"
  | "nothing-lost"
  | "no-busy-poll"
  | "step-once"
  | "wf-on-complete-once"
  | "no-step-beyond-mismatch"
  | "events-once"
  | "run-final"
  | "map-window"
  | "map-fail-fast"
  | "patch-marker"
  | "operator-actions"
  | "pinned-version"
  | "journal-size";

/** A broken invariant. */
export class Violation extends Error {
  constructor(
    readonly invariant: InvariantName,
    message: string,
  ) {
    super(`${invariant}: ${message}`);
  }
}
