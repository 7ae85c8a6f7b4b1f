/**
 * The SQLite read behind AdminOps.readActivity: a window's starts and finishes per pool and
 * interval, from the rows, in one statement. Each part goes through the partial index of
 * its state on (pool, …), one lookup per pool of the list.
 */
import type { Database } from "better-sqlite3";
import type { ActivityRead } from "../../driver/admin-ops.js";
import { prepared } from "./statements.js";

/** The interval of a time column `at`, from 1 (numbers are bound as REAL, so the quotient is cast). */
const bucket = (at: string): string => `CAST((${at} - @from - 1) / @bucket AS INTEGER) + 1`;
const IN_POOLS = "w.pool IN (SELECT value FROM json_each(@pools))";
/** Started in the window: each work's latest attempt, as readPools counts it. */
const STARTED = "w.started_at > @from AND w.started_at <= @to";

const SQL = {
  activity: `SELECT pool, b, sum(started) AS started, sum(finished) AS finished, sum(waited) AS waited_count, sum(waited_ms) AS waited_sum
  FROM (
    SELECT w.pool, ${bucket("w.finished_at")} AS b, 0 AS started, count(*) AS finished, 0 AS waited, 0 AS waited_ms
      FROM workpool_work w WHERE ${IN_POOLS} AND w.state = 'finished' AND w.finished_at > @from AND w.finished_at <= @to GROUP BY 1, 2
    UNION ALL
    SELECT w.pool, ${bucket("w.started_at")}, count(*), 0, count(*), sum(w.started_at - w.run_at)
      FROM workpool_work w WHERE ${IN_POOLS} AND w.state = 'finished' AND w.finished_at > @from AND ${STARTED} GROUP BY 1, 2
    UNION ALL
    SELECT w.pool, ${bucket("w.started_at")}, count(*), 0, count(*), sum(w.started_at - w.run_at)
      FROM workpool_work w WHERE ${IN_POOLS} AND w.state = 'running' AND ${STARTED} GROUP BY 1, 2
    UNION ALL
    SELECT w.pool, ${bucket("w.started_at")}, count(*), 0, 0, 0
      FROM workpool_work w WHERE ${IN_POOLS} AND w.state = 'pending' AND w.attempt > 0 AND ${STARTED} GROUP BY 1, 2)
  GROUP BY pool, b ORDER BY pool, b`,
} as const;

interface SqliteActivityRow {
  pool: string;
  b: number;
  started: number;
  finished: number;
  waited_count: number;
  waited_sum: number;
}

/** The activity of `pools` in `(from, to]` by interval of `bucketMs`, read on `db` (see AdminOps.readActivity). */
export function readActivity(db: Database, pools: readonly string[], from: number, to: number, bucketMs: number): ActivityRead[] {
  const rows = prepared(db, SQL).activity.all({ pools: JSON.stringify(pools), from, to, bucket: bucketMs }) as SqliteActivityRow[];
  return rows.map((r) => ({
    pool: r.pool,
    bucket: r.b,
    started: r.started,
    finished: r.finished,
    waitedCount: r.waited_count,
    waitedSumMs: r.waited_sum,
  }));
}
