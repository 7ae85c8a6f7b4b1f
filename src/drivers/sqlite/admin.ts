/**
 * The admin API's reads on SQLite (AdminOps in the driver interface): pool summaries, the
 * recent past (activity.ts), listings and one work's detail, and the admin's retry. Each
 * listing filter is literal SQL, so SQLite can match it to a partial index; each filter
 * combination is prepared once per connection.
 */
import type { Database } from "better-sqlite3";
import type { ActivityRead, AdminOps, PoolRead, WorkDetailRow, WorkListQuery, WorkListRow, WorkListState } from "../../driver/admin-ops.js";
import type { NewWork } from "../../driver/driver.js";
import { newWorkValues } from "../../driver/work-columns.js";
import { readActivity } from "./activity.js";
import type { SqliteConnectionAccess } from "./connection/connection-access.js";
import type { PoolWakeups } from "./connection/wakeups.js";
import { INSERT_SQL } from "./insert.js";
import { toRateLimit } from "./rate-limits.js";
import { toWorkRow, type SqliteWorkRow } from "./rows.js";
import { prepared, preparedText, type Prepared } from "./statements.js";

/** The listing's state filters. The finished kinds repeat the partial index's term, so SQLite uses it. */
export const STATE_SQL: Record<WorkListState, string> = {
  pending: "state = 'pending' AND attempt = 0",
  retrying: "state = 'pending' AND attempt > 0",
  running: "state = 'running'",
  finished: "state = 'finished'",
  success: `state = 'finished' AND result LIKE '{"kind":"success"%'`,
  failed: `state = 'finished' AND result NOT LIKE '{"kind":"success"%' AND result LIKE '{"kind":"failed"%'`,
  canceled: `state = 'finished' AND result NOT LIKE '{"kind":"success"%' AND result LIKE '{"kind":"canceled"%'`,
};

/**
 * The states whose partial index is not in id order (pending by run_at, finished by
 * finished_at): listing through it sorts every match, listing in id order (the table
 * itself) passes every newer row that does not match. Up to this many matches, the index
 * and a sort are taken; past it, the table in id order (`+state` keeps SQLite off the
 * partial index), which then finds matches densely.
 */
const SORT_AT_MOST = 1000;
const SCANNED_IN_ID_ORDER: Partial<Record<WorkListState, { count: string; scan: string }>> = {
  pending: { count: "state = 'pending'", scan: "+state = 'pending' AND attempt = 0" },
  finished: { count: "state = 'finished'", scan: "+state = 'finished'" },
  success: { count: "state = 'finished'", scan: `+state = 'finished' AND result LIKE '{"kind":"success"%'` },
};

const RESULT_KIND = `CASE WHEN state <> 'finished' THEN NULL
    WHEN result LIKE '{"kind":"success"%' THEN 'success'
    WHEN result LIKE '{"kind":"failed"%' THEN 'failed' ELSE 'canceled' END`;

const LIST_COLUMNS = `id, pool, kind, fn_name, name, state, ${RESULT_KIND} AS result_kind, attempt, priority, key, run_at, enqueued_at, started_at, finished_at`;

/**
 * Counts of one pool, each through an index on (pool, …) of its state. Unqualified columns
 * are the subquery's own row's (w), written as in STATE_SQL so the partial indexes match.
 */
const POOL_COUNTS = `
  (SELECT count(*) FROM workpool_work w WHERE w.pool = n.pool AND w.state = 'pending' AND w.parked = 0)
  + (SELECT count(*) FROM workpool_work w WHERE w.pool = n.pool AND w.state = 'pending' AND w.parked = 1) AS pending,
  (SELECT count(*) FROM workpool_work w WHERE w.pool = n.pool AND w.state = 'pending' AND w.attempt > 0) AS retrying,
  (SELECT count(*) FROM workpool_work w WHERE w.pool = n.pool AND w.state = 'running') AS running,
  (SELECT count(*) FROM workpool_work w WHERE w.pool = n.pool AND w.state = 'finished') AS finished,
  (SELECT count(*) FROM workpool_work w WHERE w.pool = n.pool AND ${STATE_SQL.failed}) AS failed,
  (SELECT count(*) FROM workpool_work w WHERE w.pool = n.pool AND ${STATE_SQL.canceled}) AS canceled,
  (SELECT min(run_at) FROM (
    SELECT min(run_at) AS run_at FROM workpool_work w WHERE w.pool = n.pool AND w.state = 'pending' AND w.parked = 0 AND w.run_at <= @now
    UNION ALL
    SELECT min(run_at) FROM workpool_work w WHERE w.pool = n.pool AND w.state = 'pending' AND w.parked = 1 AND w.run_at <= @now)) AS oldest_due,
  (SELECT count(*) FROM workpool_work w WHERE w.pool = n.pool AND w.state = 'pending' AND w.attempt > 0 AND w.started_at >= @since)
    AS retried_since,
  (SELECT count(*) FROM workpool_work w WHERE w.pool = n.pool AND w.state = 'finished' AND w.finished_at >= @since) AS finished_since,
  (SELECT count(*) FROM workpool_work w WHERE w.pool = n.pool AND w.state = 'running' AND w.started_at >= @since)
  + (SELECT count(*) FROM workpool_work w WHERE w.pool = n.pool AND w.state = 'finished' AND w.finished_at >= @since AND w.started_at >= @since)
    AS waited_count,
  (SELECT coalesce(sum(w.started_at - w.run_at), 0) FROM workpool_work w WHERE w.pool = n.pool AND w.state = 'running' AND w.started_at >= @since)
  + (SELECT coalesce(sum(w.started_at - w.run_at), 0) FROM workpool_work w
     WHERE w.pool = n.pool AND w.state = 'finished' AND w.finished_at >= @since AND w.started_at >= @since) AS waited_sum`;

/** Pool names with work matching `where` (a partial index's predicate): a skip through that index, one step per pool. */
const poolsIn = (where: string): string => `SELECT * FROM (WITH RECURSIVE p(pool) AS (
      SELECT min(pool) FROM workpool_work WHERE ${where}
      UNION ALL SELECT (SELECT min(pool) FROM workpool_work WHERE ${where} AND pool > p.pool) FROM p WHERE p.pool IS NOT NULL)
    SELECT pool FROM p WHERE pool IS NOT NULL)`;

const SQL = {
  readPools: `WITH n AS (
      SELECT name AS pool FROM workpool_pools
      UNION ${poolsIn("state = 'pending' AND parked = 0")} UNION ${poolsIn("state = 'pending' AND parked = 1")}
      UNION ${poolsIn("state = 'running'")} UNION ${poolsIn("state = 'finished'")})
    SELECT n.pool AS name, p.max_parallelism, p.paused_from, p.key_parallelism, p.rate_limit, p.rate_period_ms,
      p.key_rate_limit, p.key_rate_period_ms, ${POOL_COUNTS}
    FROM n LEFT JOIN workpool_pools p ON p.name = n.pool WHERE n.pool IS NOT NULL ORDER BY n.pool`,
  readWorkDetail: `SELECT * FROM workpool_work WHERE id = ?`,
  // A work is retried once: the retry is inserted only if this changed the row.
  markRetried: `UPDATE workpool_work SET retried_as = ? WHERE id = ? AND state = 'finished' AND retried_as IS NULL`,
  schemaVersion: `SELECT coalesce(max(version), 0) AS v FROM workpool_migrations`,
  ...Object.fromEntries(
    Object.entries(SCANNED_IN_ID_ORDER).map(([state, { count }]) => [
      `count_${state}`,
      `SELECT count(*) AS n FROM (SELECT 1 FROM workpool_work WHERE pool = ? AND ${count} LIMIT ${SORT_AT_MOST + 1})`,
    ]),
  ),
} as const;

interface SqlitePoolReadRow {
  name: string;
  max_parallelism: number | null;
  paused_from: number | null;
  key_parallelism: number | null;
  rate_limit: number | null;
  rate_period_ms: number | null;
  key_rate_limit: number | null;
  key_rate_period_ms: number | null;
  pending: number;
  retrying: number;
  running: number;
  finished: number;
  failed: number;
  canceled: number;
  oldest_due: number | null;
  retried_since: number;
  finished_since: number;
  waited_count: number;
  waited_sum: number;
}

interface SqliteListRow {
  id: string;
  pool: string;
  kind: string;
  fn_name: string;
  name: string | null;
  state: string;
  result_kind: string | null;
  attempt: number;
  priority: number;
  key: string | null;
  run_at: number;
  enqueued_at: number;
  started_at: number | null;
  finished_at: number | null;
}

function toListRow(r: SqliteListRow): WorkListRow {
  return {
    id: r.id,
    pool: r.pool,
    kind: r.kind as WorkListRow["kind"],
    fnName: r.fn_name,
    name: r.name,
    state: r.state as WorkListRow["state"],
    resultKind: r.result_kind as WorkListRow["resultKind"],
    attempt: r.attempt,
    priority: r.priority,
    key: r.key,
    runAt: r.run_at,
    enqueuedAt: r.enqueued_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  };
}

/** The admin operations of the SQLite driver, on the store's connection. */
export class SqliteAdmin implements AdminOps {
  private readonly sql: Prepared<typeof SQL>;
  private readonly insert: Prepared<typeof INSERT_SQL>["insert"];

  constructor(
    private readonly db: Database,
    private readonly access: SqliteConnectionAccess,
    private readonly wakeups: PoolWakeups,
  ) {
    this.sql = prepared(db, SQL);
    this.insert = prepared(db, INSERT_SQL).insert;
  }

  listWork(pool: string, q: WorkListQuery): Promise<WorkListRow[]> {
    return this.access.read(() => {
      const where = ["pool = @pool", ...(q.state === null ? [] : [this.stateTerm(pool, q.state)])];
      if (q.fnName !== null) where.push("fn_name = @fn_name");
      if (q.id !== null) where.push("id = @id");
      if (q.key !== null) where.push("key = @key");
      if (q.prefix !== null) where.push("(substr(fn_name, 1, length(@prefix)) = @prefix OR substr(name, 1, length(@prefix)) = @prefix)");
      if (q.beforeId !== null) where.push("id < @before");
      const sql = `SELECT ${LIST_COLUMNS} FROM workpool_work WHERE ${where.join(" AND ")} ORDER BY id DESC LIMIT @limit`;
      const params: Record<string, string | number> = { pool, limit: q.limit };
      if (q.fnName !== null) params.fn_name = q.fnName;
      if (q.id !== null) params.id = q.id;
      if (q.key !== null) params.key = q.key;
      if (q.prefix !== null) params.prefix = q.prefix;
      if (q.beforeId !== null) params.before = q.beforeId;
      return (preparedText(this.db, sql).all(params) as SqliteListRow[]).map(toListRow);
    });
  }

  readActivity(pools: readonly string[], from: number, to: number, bucketMs: number): Promise<ActivityRead[]> {
    return this.access.read(() => readActivity(this.db, pools, from, to, bucketMs));
  }

  readPools(now: number, since: number): Promise<PoolRead[]> {
    return this.access.read(() =>
      (this.sql.readPools.all({ now, since }) as SqlitePoolReadRow[]).map((r) => ({
        name: r.name,
        maxParallelism: r.max_parallelism,
        pausedFrom: r.paused_from,
        keyParallelism: r.key_parallelism,
        rateLimit: toRateLimit(r.rate_limit, r.rate_period_ms),
        keyRateLimit: toRateLimit(r.key_rate_limit, r.key_rate_period_ms),
        pending: r.pending,
        retrying: r.retrying,
        running: r.running,
        finished: r.finished,
        failed: r.failed,
        canceled: r.canceled,
        oldestDueRunAt: r.oldest_due,
        retriedSince: r.retried_since,
        finishedSince: r.finished_since,
        waitedCount: r.waited_count,
        waitedSumMs: r.waited_sum,
      })),
    );
  }

  readWorkDetail(id: string): Promise<WorkDetailRow | null> {
    return this.access.read(() => {
      const row = this.sql.readWorkDetail.get(id) as
        (SqliteWorkRow & { attempt_log: string | null; retried_as: string | null }) | undefined;
      return row ? { ...toWorkRow(row), attemptLog: row.attempt_log, retriedAs: row.retried_as } : null;
    });
  }

  /** Marks `id` as retried by `work` and inserts it, in one write transaction; false if `id` is not finished or was retried. */
  async retryWork(id: string, work: NewWork): Promise<boolean> {
    const inserted = await this.access.write(() => {
      if (this.sql.markRetried.run(work.id, id).changes === 0) return false;
      this.insert.run(newWorkValues(work));
      return true;
    });
    if (inserted) this.wakeups.wakeSoon([work]);
    return inserted;
  }

  schemaVersion(): Promise<number> {
    return this.access.read(() => (this.sql.schemaVersion.get() as { v: number }).v);
  }

  /** The state filter's SQL, in the form that lists fastest for the pool's current rows (see SORT_AT_MOST). */
  private stateTerm(pool: string, state: WorkListState): string {
    const scanned = SCANNED_IN_ID_ORDER[state];
    if (!scanned) return STATE_SQL[state];
    const { n } = this.sql[`count_${state}` as keyof typeof SQL].get(pool) as { n: number };
    return n > SORT_AT_MOST ? scanned.scan : STATE_SQL[state];
  }
}
