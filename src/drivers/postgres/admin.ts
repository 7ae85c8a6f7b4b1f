/**
 * The admin API's reads on PostgreSQL (AdminOps in the driver interface): pool summaries,
 * the recent past (activity.ts), listings and one work's detail, and the admin's retry.
 * Each listing filter is literal SQL, so the planner can match it to a partial index; each
 * filter combination is its own named statement, prepared once per connection.
 */
import type { ActivityRead, AdminOps, PoolRead, WorkDetailRow, WorkListQuery, WorkListRow, WorkListState } from "../../driver/admin-ops.js";
import type { NewWork } from "../../driver/driver.js";
import { columnList, ROW_COLUMNS, rowValues } from "../../driver/work-columns.js";
import { readActivity } from "./activity.js";
import { inTransaction, run, type Queryable } from "./connection.js";
import type { PgConnections } from "./connection/connections.js";
import { columnParams } from "./insert.js";
import { quoteIdent } from "./names.js";
import { toRateLimit } from "./rate-limits.js";
import { numOrNull, toWorkRow, WORK_SELECT, type PgWorkRow } from "./rows.js";
import { named, statementsOf, type Statements } from "./statements.js";

/** The listing's state filters, on the work row `w`. The finished kinds repeat the partial index's term. */
export const STATE_SQL: Record<WorkListState, string> = {
  pending: "w.state = 'pending' AND w.attempt = 0",
  retrying: "w.state = 'pending' AND w.attempt > 0",
  running: "w.state = 'running'",
  finished: "w.state = 'finished'",
  success: `w.state = 'finished' AND w.result LIKE '{"kind":"success"%'`,
  failed: `w.state = 'finished' AND w.result NOT LIKE '{"kind":"success"%' AND w.result LIKE '{"kind":"failed"%'`,
  canceled: `w.state = 'finished' AND w.result NOT LIKE '{"kind":"success"%' AND w.result LIKE '{"kind":"canceled"%'`,
};

const RESULT_KIND = `CASE WHEN w.state <> 'finished' THEN NULL
    WHEN w.result LIKE '{"kind":"success"%' THEN 'success'
    WHEN w.result LIKE '{"kind":"failed"%' THEN 'failed' ELSE 'canceled' END`;

const LIST_COLUMNS = `w.id, w.pool, w.kind, w.fn_name, w.name, w.state, ${RESULT_KIND} AS result_kind, w.attempt, w.priority, w.key, w.run_at,
  w.enqueued_at, w.started_at, w.finished_at`;

/** Counts of one pool (n.pool), each through an index on (pool, …) of its state. $1 now, $2 since. */
function poolCounts(work: string): string {
  const count = (where: string): string => `(SELECT count(*)::int FROM ${work} w WHERE w.pool = n.pool AND ${where})`;
  const waited = (where: string): string =>
    `(SELECT coalesce(sum(w.started_at - w.run_at), 0)::float8 FROM ${work} w WHERE w.pool = n.pool AND ${where})`;
  // Pending work is counted through its two partial indexes (ready and parked): no index has
  // `state = 'pending'` alone, and that predicate read the whole table.
  return `${count("w.state = 'pending' AND NOT w.parked")} + ${count("w.state = 'pending' AND w.parked")} AS pending,
    ${count("w.state = 'pending' AND w.attempt > 0")} AS retrying,
    ${count("w.state = 'running'")} AS running,
    ${count("w.state = 'finished'")} AS finished,
    ${count(STATE_SQL.failed)} AS failed,
    ${count(STATE_SQL.canceled)} AS canceled,
    least((SELECT min(w.run_at) FROM ${work} w WHERE w.pool = n.pool AND w.state = 'pending' AND NOT w.parked AND w.run_at <= $1::bigint),
          (SELECT min(w.run_at) FROM ${work} w WHERE w.pool = n.pool AND w.state = 'pending' AND w.parked AND w.run_at <= $1::bigint))
      AS oldest_due,
    ${count("w.state = 'pending' AND w.attempt > 0 AND w.started_at >= $2::bigint")} AS retried_since,
    ${count("w.state = 'finished' AND w.finished_at >= $2::bigint")} AS finished_since,
    ${count("w.state = 'running' AND w.started_at >= $2::bigint")}
      + ${count("w.state = 'finished' AND w.finished_at >= $2::bigint AND w.started_at >= $2::bigint")} AS waited_count,
    ${waited("w.state = 'running' AND w.started_at >= $2::bigint")}
      + ${waited("w.state = 'finished' AND w.finished_at >= $2::bigint AND w.started_at >= $2::bigint")} AS waited_sum`;
}

/**
 * `in_<name>(pool)`: the pools with work matching `where` (a partial index's predicate), a
 * skip through that index (one step per pool) rather than a read of every entry. NULL ends
 * the list.
 */
function poolsIn(work: string, name: string, where: string): string {
  return `in_${name}(pool) AS (
      SELECT min(w.pool) FROM ${work} w WHERE ${where}
      UNION ALL SELECT (SELECT min(w.pool) FROM ${work} w WHERE ${where} AND w.pool > p.pool) FROM in_${name} p
      WHERE p.pool IS NOT NULL)`;
}

/** The parameter of the retried work's id, after the new work's columns (ROW_COLUMNS). */
const RETRIED = ROW_COLUMNS.length + 1;
/** The parameter of the new work's id. */
const NEW_ID = ROW_COLUMNS.findIndex((c) => c.field === "id") + 1;

/** The fixed admin statements of a schema. */
function adminSql(s: string) {
  const work = `${s}.work`;
  return {
    readPools: `WITH RECURSIVE ${poolsIn(work, "ready", "w.state = 'pending' AND NOT w.parked")},
      ${poolsIn(work, "parked", "w.state = 'pending' AND w.parked")}, ${poolsIn(work, "running", "w.state = 'running'")},
      ${poolsIn(work, "finished", "w.state = 'finished'")},
      n AS (SELECT name AS pool FROM ${s}.pools UNION SELECT pool FROM in_ready UNION SELECT pool FROM in_parked
        UNION SELECT pool FROM in_running UNION SELECT pool FROM in_finished)
      -- The NULL that ends each skip is no pool.
      SELECT n.pool AS name, p.max_parallelism, p.paused_from, p.key_parallelism, p.rate_limit, p.rate_period_ms,
      p.key_rate_limit, p.key_rate_period_ms, ${poolCounts(work)}
      FROM n LEFT JOIN ${s}.pools p ON p.name = n.pool WHERE n.pool IS NOT NULL ORDER BY n.pool`,
    readWorkDetail: `SELECT ${WORK_SELECT}, attempt_log::text AS attempt_log, retried_as FROM ${work} WHERE id = $1::text`,
    // The new work's columns (ROW_COLUMNS), then the retried work and the channel. One
    // statement: the retried work is marked only while unmarked (a concurrent retry waits for
    // the row, then finds it marked), and the new work is inserted, with its NOTIFY, only from the mark.
    retryWork: `WITH mark AS (
        UPDATE ${work} SET retried_as = $${NEW_ID}::text WHERE id = $${RETRIED}::text AND state = 'finished' AND retried_as IS NULL
        RETURNING pool),
      ins AS (
        INSERT INTO ${work} (${columnList(ROW_COLUMNS)}, state)
        SELECT ${columnParams(ROW_COLUMNS)}, 'pending'
        FROM mark
        RETURNING pool)
      SELECT (SELECT count(*) FROM ins)::int AS inserted, (SELECT count(pg_notify($${RETRIED + 1}::text, ins.pool)) FROM ins)::int AS notified`,
  };
}

interface PgPoolReadRow {
  name: string;
  max_parallelism: number | null;
  paused_from: number | null;
  key_parallelism: number | null;
  rate_limit: number | null;
  rate_period_ms: string | null;
  key_rate_limit: number | null;
  key_rate_period_ms: string | null;
  pending: number;
  retrying: number;
  running: number;
  finished: number;
  failed: number;
  canceled: number;
  oldest_due: string | number | null;
  retried_since: number;
  finished_since: number;
  waited_count: number;
  waited_sum: number;
}

interface PgListRow {
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
  run_at: string | number;
  enqueued_at: string | number;
  started_at: string | number | null;
  finished_at: string | number | null;
}

/** The admin operations of the PostgreSQL driver. */
export class PgAdmin implements AdminOps {
  private readonly sql: Statements<ReturnType<typeof adminSql>>;

  constructor(
    private readonly schema: string,
    private readonly channel: string,
    private readonly conn: PgConnections,
  ) {
    this.sql = statementsOf(schema, adminSql);
  }

  async listWork(pool: string, q: WorkListQuery): Promise<WorkListRow[]> {
    const where = ["w.pool = $1::text"];
    const params: unknown[] = [pool, q.limit];
    const param = (value: unknown, type: string): string => `$${params.push(value)}::${type}`;
    if (q.state !== null) where.push(STATE_SQL[q.state]);
    if (q.fnName !== null) where.push(`w.fn_name = ${param(q.fnName, "text")}`);
    if (q.id !== null) where.push(`w.id = ${param(q.id, "text")}`);
    if (q.key !== null) where.push(`w.key = ${param(q.key, "text")}`);
    if (q.prefix !== null) {
      const p = param(q.prefix, "text");
      where.push(`(starts_with(w.fn_name, ${p}) OR starts_with(w.name, ${p}))`);
    }
    if (q.beforeId !== null) where.push(`w.id < ${param(q.beforeId, "text")}`);
    const text = `SELECT ${LIST_COLUMNS} FROM ${quoteIdent(this.schema)}.work w WHERE ${where.join(" AND ")}
      ORDER BY w.id DESC LIMIT $2::int`;
    const { rows } = await run<PgListRow>(this.conn.app, named(text), params);
    return rows.map((r) => ({
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
      runAt: Number(r.run_at),
      enqueuedAt: Number(r.enqueued_at),
      startedAt: numOrNull(r.started_at),
      finishedAt: numOrNull(r.finished_at),
    }));
  }

  readActivity(pools: readonly string[], from: number, to: number, bucketMs: number): Promise<ActivityRead[]> {
    return readActivity(this.conn.pool, this.schema, pools, from, to, bucketMs);
  }

  /**
   * In a transaction of its own, with JIT compilation off: the estimated cost of the
   * counts passes the JIT's threshold with a few pools, and compiling took a second and a
   * half where the query itself takes 50 ms (notes/admin-queries.md in the bench).
   */
  async readPools(now: number, since: number): Promise<PoolRead[]> {
    const rows = await inTransaction(this.conn.pool, async (client) => {
      await client.query("SET LOCAL jit = off");
      return (await run<PgPoolReadRow>(client, this.sql.readPools, [now, since])).rows;
    });
    return rows.map((r) => ({
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
      oldestDueRunAt: numOrNull(r.oldest_due),
      retriedSince: r.retried_since,
      finishedSince: r.finished_since,
      waitedCount: r.waited_count,
      waitedSumMs: r.waited_sum,
    }));
  }

  async readWorkDetail(id: string): Promise<WorkDetailRow | null> {
    const { rows } = await run<PgWorkRow & { attempt_log: string | null; retried_as: string | null }>(
      this.conn.app,
      this.sql.readWorkDetail,
      [id],
    );
    const row = rows[0];
    return row ? { ...toWorkRow(row), attemptLog: row.attempt_log, retriedAs: row.retried_as } : null;
  }

  /** One statement: marks `id` as retried by `work` and inserts it; false if `id` is not finished or was retried. */
  async retryWork(id: string, work: NewWork): Promise<boolean> {
    const { rows } = await run<{ inserted: number }>(this.conn.app, this.sql.retryWork, [...rowValues(work), id, this.channel]);
    return rows[0]!.inserted > 0;
  }

  /** The highest migration recorded in the schema; 0 when the schema or its migrations table is missing. */
  async schemaVersion(): Promise<number> {
    const db: Queryable = this.conn.db;
    const table = `${quoteIdent(this.schema)}.migrations`;
    const exists = await db.query<{ t: string | null }>({ text: "SELECT to_regclass($1) AS t", values: [table] });
    if (exists.rows[0]?.t == null) return 0;
    const { rows } = await db.query<{ v: number }>({ text: `SELECT coalesce(max(version), 0)::int AS v FROM ${table}` });
    return rows[0]!.v;
  }
}
