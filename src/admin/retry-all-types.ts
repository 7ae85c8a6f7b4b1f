/**
 * The types of admin.retryAll(): which finished work it retries, its options, and what it
 * answers. Exported from `workpool/admin` with the rest of the admin API's types.
 */
import type { WorkId } from "../types.js";

/** Which finished work of a pool admin.retryAll() retries: all of it matches every filter given. */
export interface RetryAllFilter {
  /** How the work finished: `"failed"` or `"canceled"`. */
  state: "failed" | "canceled";
  /** Only work of this handler (exact name). */
  handler?: string;
  /** Only work of this key (exact). */
  key?: string;
  /** Only work that finished at or after this time (epoch ms). */
  finishedAfter?: number;
  /** Only work that finished before this time (epoch ms); later than `finishedAfter`. */
  finishedBefore?: number;
}

/** Options of admin.retryAll(). */
export interface RetryAllOptions {
  /** Count and list the work that would be retried, and write nothing. Default false. */
  dryRun?: boolean;
}

/** One work admin.retryAll() retried, and the new work it made of it. */
export interface RetriedWork {
  id: WorkId;
  newId: WorkId;
}

/** What admin.retryAll() did: every work it retried, in id order (oldest first). */
export interface RetryAllResult {
  dryRun: false;
  /** How many it retried (the length of `retried`). */
  count: number;
  retried: RetriedWork[];
}

/** What admin.retryAll() with `dryRun` found: the work a run would retry now, in id order. */
export interface RetryAllPreview {
  dryRun: true;
  /** How many it found (the length of `ids`). */
  count: number;
  ids: WorkId[];
}
