/**
 * The admin's bulk retry on PostgreSQL (RedriveOps): the matching finished work not yet
 * retried, in id order through the index of unsuccessful work (pool, id), and the retry of
 * a page as one statement, so a page is retried whole or not at all.
 */
import type { RedriveOps, RedrivePair, RedriveQuery } from "../../driver/redrive-ops.js";
import { columnList, ROW_COLUMNS, type WorkColumnField } from "../../driver/work-columns.js";
import { run } from "./connection.js";
import type { PgConnections } from "./connection/connections.js";
import { quoteIdent } from "./names.js";
import { STATE_SQL } from "./admin.js";
import { named, statementsOf, type Statements } from "./statements.js";

/** The columns a retry does not copy from the work it retries: its identity and times. */
const NOT_COPIED: readonly WorkColumnField[] = ["id", "runAt", "enqueuedAt"];

/** The fixed statement: $1 the old ids, $2 the new ids, $3 the pool, $4 now, $5 the channel. */
function redriveSql(s: string) {
  const work = `${s}.work`;
  const copied = ROW_COLUMNS.filter((c) => !NOT_COPIED.includes(c.field));
  const values = ROW_COLUMNS.map((c) => (c.field === "id" ? "m.new_id" : NOT_COPIED.includes(c.field) ? "$4::bigint" : `m.${c.column}`));
  return {
    // The rows are locked in id order first, so two runs over the same work wait for each
    // other rather than deadlock. The mark is taken only while unset (a concurrent retry waits
    // for the row, then finds it marked), and the new work is inserted, with its NOTIFY, only
    // from the rows marked.
    redrive: `WITH p AS (SELECT * FROM unnest($1::text[], $2::text[]) AS p(id, new_id)),
      locked AS (SELECT w.id FROM ${work} w JOIN p ON w.id = p.id ORDER BY w.id FOR UPDATE OF w),
      mark AS (
        UPDATE ${work} w SET retried_as = p.new_id FROM p, locked l
        WHERE w.id = p.id AND l.id = p.id AND w.pool = $3::text AND w.state = 'finished' AND w.result NOT LIKE '{"kind":"success"%'
          AND w.retried_as IS NULL
        RETURNING w.id AS old_id, p.new_id, ${copied.map((c) => `w.${c.column}`).join(", ")}),
      ins AS (
        INSERT INTO ${work} (${columnList(ROW_COLUMNS)}, state)
        SELECT ${values.join(", ")}, 'pending' FROM mark m
        RETURNING pool)
      SELECT m.old_id, m.new_id,
        (SELECT count(pg_notify($5::text, d.pool)) FROM (SELECT DISTINCT pool FROM ins) d)::int AS notified
      FROM mark m`,
  };
}

/** The bulk retry's operations of the PostgreSQL driver. */
export class PgRedrive implements RedriveOps {
  private readonly sql: Statements<ReturnType<typeof redriveSql>>;

  constructor(
    private readonly schema: string,
    private readonly channel: string,
    private readonly conn: PgConnections,
  ) {
    this.sql = statementsOf(schema, redriveSql);
  }

  /** The WHERE terms of `query` on the work row `w`, with its parameters after `params`'. */
  private where(pool: string, q: RedriveQuery, params: unknown[]): string[] {
    const param = (value: unknown, type: string): string => `$${params.push(value)}::${type}`;
    // The kind's term repeats the partial index's, so the planner walks (pool, id) of unsuccessful work.
    const where = [`w.pool = ${param(pool, "text")}`, STATE_SQL[q.kind], "w.retried_as IS NULL"];
    const not = param(q.notPrefix, "text");
    where.push(`NOT starts_with(w.fn_name, ${not})`, `(w.on_complete IS NULL OR NOT starts_with(w.on_complete, ${not}))`);
    if (q.fnName !== null) where.push(`w.fn_name = ${param(q.fnName, "text")}`);
    if (q.key !== null) where.push(`w.key = ${param(q.key, "text")}`);
    if (q.finishedFrom !== null) where.push(`w.finished_at >= ${param(q.finishedFrom, "bigint")}`);
    if (q.finishedBefore !== null) where.push(`w.finished_at < ${param(q.finishedBefore, "bigint")}`);
    return where;
  }

  async listRedrivable(pool: string, q: RedriveQuery, afterId: string | null, throughId: string | null, limit: number): Promise<string[]> {
    const params: unknown[] = [];
    const where = this.where(pool, q, params);
    if (afterId !== null) where.push(`w.id > $${params.push(afterId)}::text`);
    if (throughId !== null) where.push(`w.id <= $${params.push(throughId)}::text`);
    const text = `SELECT w.id FROM ${quoteIdent(this.schema)}.work w WHERE ${where.join(" AND ")}
      ORDER BY w.id LIMIT $${params.push(limit)}::int`;
    const { rows } = await run<{ id: string }>(this.conn.app, named(text), params);
    return rows.map((r) => r.id);
  }

  async lastRedrivable(pool: string, q: RedriveQuery): Promise<string | null> {
    const params: unknown[] = [];
    const text = `SELECT w.id FROM ${quoteIdent(this.schema)}.work w WHERE ${this.where(pool, q, params).join(" AND ")}
      ORDER BY w.id DESC LIMIT 1`;
    const { rows } = await run<{ id: string }>(this.conn.app, named(text), params);
    return rows[0]?.id ?? null;
  }

  async redrive(pool: string, pairs: readonly RedrivePair[], now: number): Promise<RedrivePair[]> {
    if (!pairs.length) return [];
    const { rows } = await run<{ old_id: string; new_id: string }>(this.conn.app, this.sql.redrive, [
      pairs.map((p) => p.id),
      pairs.map((p) => p.newId),
      pool,
      now,
      this.channel,
    ]);
    return rows.map((r) => ({ id: r.old_id, newId: r.new_id })).sort((a, b) => (a.id < b.id ? -1 : 1));
  }
}
