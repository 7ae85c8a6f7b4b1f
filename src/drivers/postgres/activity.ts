/**
 * The PostgreSQL read behind AdminOps.readActivity: a window's starts and finishes per pool
 * and interval, from the rows, in one statement. Each part goes through the partial index
 * of its state on (pool, …), one lookup per pool of the list.
 */
import type { Pool } from "pg";
import type { ActivityRead } from "../../driver/admin-ops.js";
import { inTransaction, run } from "./connection.js";
import { statementsOf } from "./statements.js";

/** $1 pools, $2 from, $3 to, $4 interval. */
function activitySql(s: string) {
  const work = `${s}.work`;
  const bucket = (at: string): string => `(${at} - $2::bigint - 1) / $4::bigint + 1`;
  const inPools = "w.pool = ANY($1::text[])";
  // Started in the window: each work's latest attempt, as readPools counts it.
  const started = "w.started_at > $2::bigint AND w.started_at <= $3::bigint";
  const activity = `SELECT pool, b, sum(started)::int AS started, sum(finished)::int AS finished, sum(waited)::int AS waited_count,
      sum(waited_ms)::float8 AS waited_sum
    FROM (
      SELECT w.pool, ${bucket("w.finished_at")} AS b, 0::bigint AS started, count(*) AS finished, 0::bigint AS waited, 0::numeric AS waited_ms
        FROM ${work} w WHERE ${inPools} AND w.state = 'finished' AND w.finished_at > $2::bigint AND w.finished_at <= $3::bigint GROUP BY 1, 2
      UNION ALL
      SELECT w.pool, ${bucket("w.started_at")}, count(*), 0, count(*), sum(w.started_at - w.run_at)
        FROM ${work} w WHERE ${inPools} AND w.state = 'finished' AND w.finished_at > $2::bigint AND ${started} GROUP BY 1, 2
      UNION ALL
      SELECT w.pool, ${bucket("w.started_at")}, count(*), 0, count(*), sum(w.started_at - w.run_at)
        FROM ${work} w WHERE ${inPools} AND w.state = 'running' AND ${started} GROUP BY 1, 2
      UNION ALL
      SELECT w.pool, ${bucket("w.started_at")}, count(*), 0, 0, 0
        FROM ${work} w WHERE ${inPools} AND w.state = 'pending' AND w.attempt > 0 AND ${started} GROUP BY 1, 2) parts
    GROUP BY pool, b ORDER BY pool, b`;
  return { activity };
}

interface PgActivityRow {
  pool: string;
  b: string | number;
  started: number;
  finished: number;
  waited_count: number;
  waited_sum: number;
}

/**
 * The activity of `pools` in `(from, to]` by interval of `bucketMs` (see AdminOps.readActivity),
 * in a transaction of its own with JIT compilation off, as readPools: compiling would cost more than the read.
 */
export async function readActivity(
  pool: Pool,
  schema: string,
  pools: readonly string[],
  from: number,
  to: number,
  bucketMs: number,
): Promise<ActivityRead[]> {
  const rows = await inTransaction(pool, async (client) => {
    await client.query("SET LOCAL jit = off");
    return (await run<PgActivityRow>(client, statementsOf(schema, activitySql).activity, [pools, from, to, bucketMs])).rows;
  });
  return rows.map((r) => ({
    pool: r.pool,
    bucket: Number(r.b),
    started: r.started,
    finished: r.finished,
    waitedCount: r.waited_count,
    waitedSumMs: r.waited_sum,
  }));
}
