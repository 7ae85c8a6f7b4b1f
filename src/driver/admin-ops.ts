/**
 * The part of the driver interface the admin API (src/admin/) reads through, and the
 * admin's own write (a retry): pool summaries, the recent past, listing and reading work.
 * Like the rest of the interface it is internal; every time is a parameter.
 */
import type { RateLimit } from "../types.js";
import type { NewWork, WorkRow } from "./work-rows.js";

/** A state filter of a work listing (see AdminStateFilter in the admin API). */
export type WorkListState = "pending" | "retrying" | "running" | "finished" | "success" | "failed" | "canceled";

/**
 * What one pool looks like in the store at `now`: its stored limits and raw counts, each
 * of one kind of row. The admin API derives what it shows from them (src/admin/pool-counts.ts).
 */
export interface PoolRead {
  name: string;
  /** The stored limit; null when the pool has work but no stored configuration yet. */
  maxParallelism: number | null;
  /** Set while paused: the limit a resume restores. */
  pausedFrom: number | null;
  /** The stored per-key limit, or null. */
  keyParallelism: number | null;
  /** The stored rate limits, or null. */
  rateLimit: RateLimit | null;
  keyRateLimit: RateLimit | null;
  /** Pending work, retrying work included. */
  pending: number;
  /** Pending work after at least one attempt (waiting to retry, or handed back after a retry). */
  retrying: number;
  running: number;
  /** Finished work, whatever its result. */
  finished: number;
  /** Finished work that failed. */
  failed: number;
  /** Finished work that was canceled. */
  canceled: number;
  /** Earliest run_at of the pool's due pending work; null when none is due. */
  oldestDueRunAt: number | null;
  /** Pending work whose latest attempt started at or after `since` (it waits to retry). */
  retriedSince: number;
  /** Work finished at or after `since`. */
  finishedSince: number;
  /**
   * Of the work whose latest attempt started at or after `since` and that is running or
   * finished (a work waiting to retry has a new run_at): how many, and the sum of their
   * waits to start (started_at - run_at), ms.
   */
  waitedCount: number;
  waitedSumMs: number;
}

/**
 * What one pool's rows say happened in one interval of a window (see AdminOps.readActivity),
 * counted as PoolRead counts since a time.
 */
export interface ActivityRead {
  pool: string;
  /** The interval, from 1: it covers `(from + (bucket - 1) * bucketMs, from + bucket * bucketMs]`. */
  bucket: number;
  /** Work whose latest attempt started in the interval. */
  started: number;
  /** Work finished in the interval. */
  finished: number;
  /** Of the work started in it, the running and finished ones (not waiting to retry): how many, and the sum of their waits to start, ms. */
  waitedCount: number;
  waitedSumMs: number;
}

/** A listing query of one pool's work, newest (highest id) first. */
export interface WorkListQuery {
  state: WorkListState | null;
  /** Handler name, exactly. */
  fnName: string | null;
  /** Only this work id. */
  id: string | null;
  /** Only work whose handler or display name starts with this. */
  prefix: string | null;
  /** Only work of this key, exactly. */
  key: string | null;
  /** Only ids below this one (the previous page's last id). */
  beforeId: string | null;
  limit: number;
}

/** One row of a listing: a work's row without its payloads. */
export interface WorkListRow {
  id: string;
  pool: string;
  kind: WorkRow["kind"];
  fnName: string;
  name: string | null;
  state: WorkRow["state"];
  /** How finished work ended (read from its result); null before it finished. */
  resultKind: "success" | "failed" | "canceled" | null;
  attempt: number;
  priority: number;
  key: string | null;
  runAt: number;
  enqueuedAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}

/** A whole row plus its attempt log. */
export interface WorkDetailRow extends WorkRow {
  /** JSON text of the last failed attempts' records (oldest first), or null. */
  attemptLog: string | null;
  /** The id of the work an admin retry made of this one, or null. */
  retriedAs: string | null;
}

/** The driver operations behind the admin API. */
export interface AdminOps {
  /** A page of `pool`'s work matching `query`, highest id first, at most `query.limit` rows. */
  listWork(pool: string, query: WorkListQuery): Promise<WorkListRow[]>;
  /** Attempts started and work finished in `(from, to]` per pool and interval of `bucketMs`, counted as readPools counts them; empty intervals left out. */
  readActivity(pools: readonly string[], from: number, to: number, bucketMs: number): Promise<ActivityRead[]>;
  /** Every pool the store knows (a stored configuration, or work) with its raw counts at `now`; the "since" counts count each work's latest attempt only. */
  readPools(now: number, since: number): Promise<PoolRead[]>;
  /** One work by id, whatever its pool, with its attempt log; null if there is none. */
  readWorkDetail(id: string): Promise<WorkDetailRow | null>;
  /** Inserts `work` as the retry of the finished work `id` and records it there, once: of any number of concurrent calls for one id, one inserts (and wakes the pool); true if this one did. */
  retryWork(id: string, work: NewWork): Promise<boolean>;
  /** The highest migration the store records (0 for none), without migrating. */
  schemaVersion(): Promise<number>;
}
