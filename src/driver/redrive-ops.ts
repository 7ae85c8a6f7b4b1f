/**
 * The driver operations behind the admin's bulk retry (admin.retryAll): the matching
 * finished work not yet retried, page by page in id order, and the retry of one page in
 * one transaction. Like the rest of the interface it is internal; every time is a parameter.
 */

/** Which finished work a bulk retry matches (besides its pool). */
export interface RedriveQuery {
  /** How the work finished. */
  kind: "failed" | "canceled";
  /** Handler name, exactly. */
  fnName: string | null;
  /** Key, exactly. */
  key: string | null;
  /** Only work with `finished_at >= finishedFrom`. */
  finishedFrom: number | null;
  /** Only work with `finished_at < finishedBefore`. */
  finishedBefore: number | null;
  /** Leaves out work whose handler or onComplete handler name starts with this (workflows' own work). */
  notPrefix: string;
}

/** One work a bulk retry retried, and the new work it made of it. */
export interface RedrivePair {
  id: string;
  newId: string;
}

/** The driver operations of admin.retryAll. */
export interface RedriveOps {
  /**
   * The ids of `pool`'s work matching `query` whose retried_as is unset, in id order:
   * after `afterId` (null: from the first), up to and including `throughId` (null: no
   * bound), at most `limit`.
   */
  listRedrivable(pool: string, query: RedriveQuery, afterId: string | null, throughId: string | null, limit: number): Promise<string[]>;
  /** The highest id listRedrivable would give for `query` now, or null when none matches. */
  lastRedrivable(pool: string, query: RedriveQuery): Promise<string | null>;
  /**
   * In one transaction, for each pair whose work is `pool`'s, finished without success and
   * not yet retried: records `newId` as its retried_as and inserts the new work `newId`
   * (the row as admin.retry makes it: every enqueue column copied but the unique key, due
   * at `now`), waking the pool. Returns the pairs it retried; a work retried meanwhile (by
   * another call) or deleted is left out.
   */
  redrive(pool: string, pairs: readonly RedrivePair[], now: number): Promise<RedrivePair[]>;
}
