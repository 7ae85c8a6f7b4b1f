/**
 * The part of the driver interface about what a running action reports of itself: its
 * progress and log lines, one stored record per attempt, written by the worker that runs
 * it and read by status() and the admin API. Internal like the rest of the interface.
 */
import type { AttemptRef } from "./work-writes.js";
import type { WorkRow } from "./work-rows.js";

/** One attempt's output as its worker writes it: the whole record, replacing the stored one. */
export interface AttemptOutputWrite {
  id: string;
  attempt: number;
  /** JSON text of the last progress reported; null for none. */
  progress: string | null;
  /** When it was reported (epoch ms); null for none. */
  progressAt: number | null;
  /** JSON text of the attempt's kept log lines (an array, oldest first); null for none. */
  logs: string | null;
  /** Earlier lines dropped to keep within the bounds. */
  logsDropped: number;
}

/** One attempt's stored output. */
export interface AttemptOutputRow extends AttemptOutputWrite {
  /** When it was last written (epoch ms). */
  updatedAt: number;
}

/** Attempts whose output is kept per work: older ones are deleted as newer ones write. */
export const KEPT_ATTEMPT_OUTPUTS = 10;

/** The driver operations on attempt output. */
export interface AttemptOutputOps {
  /**
   * Writes each attempt's output (insert or replace) where its work, in `pool`, is still
   * `running` on that attempt for `workerId`; deletes the outputs of the work's attempts
   * {@link KEPT_ATTEMPT_OUTPUTS} or more before it. One transaction; returns the writes
   * that did not apply (their attempt is no longer this worker's).
   */
  writeAttemptOutput(pool: string, workerId: string, writes: readonly AttemptOutputWrite[], now: number): Promise<AttemptRef[]>;
  /** The stored outputs of the given works' attempts, by work id then attempt. */
  readAttemptOutput(ids: readonly string[]): Promise<AttemptOutputRow[]>;
  /**
   * Rows of `pool` by id (as readWork) with the last progress of each running row's current
   * attempt, in one read: status() sees a row and its progress as they were together.
   */
  readWorkWithProgress(pool: string, ids: readonly string[]): Promise<{ row: WorkRow; progress: string | null }[]>;
}
