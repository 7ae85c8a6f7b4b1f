/**
 * The admin's bulk retry on SQLite (RedriveOps): the matching finished work not yet
 * retried, in id order through the index of unsuccessful work (pool, then id: the table is
 * WITHOUT ROWID), and the retry of a page in one write transaction.
 */
import type { Database } from "better-sqlite3";
import type { RedriveOps, RedrivePair, RedriveQuery } from "../../driver/redrive-ops.js";
import { columnList, ROW_COLUMNS, type WorkColumnField } from "../../driver/work-columns.js";
import { STATE_SQL } from "./admin.js";
import type { SqliteConnectionAccess } from "./connection/connection-access.js";
import type { PoolWakeups } from "./connection/wakeups.js";
import { prepared, preparedText, type Prepared } from "./statements.js";

/** The columns a retry does not copy from the work it retries: its identity and times. */
const NOT_COPIED: readonly WorkColumnField[] = ["id", "runAt", "enqueuedAt"];

const SQL = {
  // A work is retried once: the copy is inserted only if this changed the row.
  mark: `UPDATE workpool_work SET retried_as = @new_id
    WHERE id = @id AND pool = @pool AND state = 'finished' AND result NOT LIKE '{"kind":"success"%' AND retried_as IS NULL`,
  copy: `INSERT INTO workpool_work (${columnList(ROW_COLUMNS)}, state)
    SELECT ${ROW_COLUMNS.map((c) => (c.field === "id" ? "@new_id" : NOT_COPIED.includes(c.field) ? "@now" : c.column)).join(", ")}, 'pending'
    FROM workpool_work WHERE id = @id`,
} as const;

/** The bulk retry's operations of the SQLite driver, on the store's connection. */
export class SqliteRedrive implements RedriveOps {
  private readonly sql: Prepared<typeof SQL>;

  constructor(
    private readonly db: Database,
    private readonly access: SqliteConnectionAccess,
    private readonly wakeups: PoolWakeups,
  ) {
    this.sql = prepared(db, SQL);
  }

  /** The WHERE terms and named parameters of `query`; the kind's term repeats the partial index's. */
  private where(pool: string, q: RedriveQuery): { where: string[]; params: Record<string, string | number> } {
    const where = [
      "pool = @pool",
      STATE_SQL[q.kind],
      "retried_as IS NULL",
      "substr(fn_name, 1, length(@not)) <> @not",
      "(on_complete IS NULL OR substr(on_complete, 1, length(@not)) <> @not)",
    ];
    const params: Record<string, string | number> = { pool, not: q.notPrefix };
    const term = (sql: string, name: string, value: string | number | null): void => {
      if (value === null) return;
      where.push(sql);
      params[name] = value;
    };
    term("fn_name = @fn_name", "fn_name", q.fnName);
    term("key = @key", "key", q.key);
    term("finished_at >= @from", "from", q.finishedFrom);
    term("finished_at < @before", "before", q.finishedBefore);
    return { where, params };
  }

  listRedrivable(pool: string, q: RedriveQuery, afterId: string | null, throughId: string | null, limit: number): Promise<string[]> {
    return this.access.read(() => {
      const { where, params } = this.where(pool, q);
      if (afterId !== null) {
        where.push("id > @after");
        params.after = afterId;
      }
      if (throughId !== null) {
        where.push("id <= @through");
        params.through = throughId;
      }
      const sql = `SELECT id FROM workpool_work WHERE ${where.join(" AND ")} ORDER BY id LIMIT @limit`;
      return (preparedText(this.db, sql).all({ ...params, limit }) as { id: string }[]).map((r) => r.id);
    });
  }

  lastRedrivable(pool: string, q: RedriveQuery): Promise<string | null> {
    return this.access.read(() => {
      const { where, params } = this.where(pool, q);
      const sql = `SELECT id FROM workpool_work WHERE ${where.join(" AND ")} ORDER BY id DESC LIMIT 1`;
      return (preparedText(this.db, sql).get(params) as { id: string } | undefined)?.id ?? null;
    });
  }

  async redrive(pool: string, pairs: readonly RedrivePair[], now: number): Promise<RedrivePair[]> {
    if (!pairs.length) return [];
    const done = await this.access.write(() =>
      pairs.filter((p) => {
        if (this.sql.mark.run({ id: p.id, new_id: p.newId, pool }).changes === 0) return false;
        this.sql.copy.run({ id: p.id, new_id: p.newId, now });
        return true;
      }),
    );
    if (done.length) this.wakeups.wakeSoon([{ pool }]);
    return done.map((p) => ({ id: p.id, newId: p.newId }));
  }
}
