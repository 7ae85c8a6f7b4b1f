/**
 * Enqueue on PostgreSQL: a batch of new work is one statement, run in the caller's
 * transaction (`tx`), in the handler's transaction the caller runs inside, or in
 * autocommit with its wake-up sent inline or coalesced with other enqueues' (see
 * Notifier); a row with a unique key is one upsert; and one row may be inserted and
 * claimed together (see enqueue_claim() in schema.sql).
 */
import type { PoolClient } from "pg";
import type { ClaimOptions, NewWork, WorkRow } from "../../driver/driver.js";
import type { TransactionExecutor } from "../../driver/tx-executor.js";
import {
  columnList,
  newWorkValues,
  REPLACED_SET,
  ROW_COLUMNS,
  rowValues,
  sharesColumns,
  WORK_COLUMNS,
  type WorkColumn,
  type WorkColumnField,
} from "../../driver/work-columns.js";
import { run } from "./connection.js";
import type { PgStoreLifecycle } from "./connection/lifecycle.js";
import type { Notifier } from "./connection/notifier.js";
import type { PgTransactions } from "./connection/transactions.js";
import type { TxChecker } from "./connection/tx-check.js";
import { claimedRow } from "./rows.js";
import { SendTime } from "./send-time.js";
import { statementsOf, type Statement, type Statements } from "./statements.js";

/** The 1-based parameter position of each column in WORK_COLUMNS order. */
const at = (field: WorkColumnField): number => WORK_COLUMNS.findIndex((c) => c.field === field) + 1;
/** `$n::type` of the columns, numbered from `from` in their order. */
export const columnParams = (columns: readonly WorkColumn[], from = 1): string =>
  columns.map((c, i) => `$${i + from}::${c.pgType}`).join(", ");
/** The parameter after the columns: the NOTIFY channel. */
const CHANNEL = `$${WORK_COLUMNS.length + 1}::text`;

/**
 * The enqueue statements, by InsertForm: one row as plain VALUES (it plans and runs faster
 * than unnest), a batch as unnest. The notifying forms wake every listener at commit; the
 * quiet ones are for enqueues whose wake-up the Notifier sends after them. The columns are
 * WORK_COLUMNS in order (newWorkValues()), then the channel.
 */
function insertSql(s: string) {
  const insertInto = `INSERT INTO ${s}.work (${columnList(WORK_COLUMNS)}, state)`;
  const oneRow = `${columnParams(WORK_COLUMNS)}, 'pending'`;
  const insertOne = `${insertInto} VALUES (${oneRow})`;
  const insertBatch = `${insertInto}
    SELECT ${WORK_COLUMNS.map((c) => `t.${c.column}`).join(", ")}, 'pending'
    FROM unnest(${WORK_COLUMNS.map((c, i) => `$${i + 1}::${c.pgType}[]`).join(", ")}) AS t(${columnList(WORK_COLUMNS)})`;
  // A batch whose rows differ only in id and args (every batch one enqueue call makes):
  // two arrays to send and unnest instead of one per column; the other columns are scalars at
  // the same parameter positions as in the other forms.
  const sharedRow = `${WORK_COLUMNS.map((c, i) => (c.field === "id" || c.field === "args" ? `t.${c.column}` : `$${i + 1}::${c.pgType}`)).join(", ")}, 'pending'`;
  const sharedFrom = `unnest($${at("id")}::text[], $${at("args")}::text[]) AS t(id, args)`;
  const insertShared = `${insertInto} SELECT ${sharedRow} FROM ${sharedFrom}`;
  // The notifying forms. In the one-row and shared forms every row has the pool of its
  // parameter: the NOTIFY is a CTE the insert selects from (one row, evaluated once: a CTE
  // calling a volatile function is never inlined), so the statement answers like the quiet
  // one, with no rows. Run once per coalescing window among quiet inserts, a statement that
  // returned a row cost 3–5 times as much more than a quiet insert as this form does.
  const notifyPool = `WITH n AS (SELECT pg_notify(${CHANNEL}, $${at("pool")}::text)) ${insertInto}`;
  const notifying = (insert: string) =>
    `WITH ins AS (${insert} RETURNING pool) SELECT pg_notify(${CHANNEL}, p.pool) FROM (SELECT DISTINCT pool FROM ins) p`;
  // A row with a unique key: an upsert on the unique index of pending unique keys, so two
  // enqueues racing for one key make one work. The pending work that has the key is kept
  // (a write of nothing, so that RETURNING gives its id) or has its fields replaced (and is
  // unparked: its key may have changed); either way its id comes back. A conflicting row
  // that a claim is starting is waited for, and then no longer conflicts.
  const onUnique = `ON CONFLICT (pool, unique_key) WHERE state = 'pending' AND unique_key IS NOT NULL DO UPDATE SET`;
  const k = ROW_COLUMNS.length;
  return {
    insertOne: `${notifyPool} SELECT ${oneRow} FROM n`,
    insertOneQuiet: insertOne,
    insertShared: `${notifyPool} SELECT ${sharedRow} FROM n, ${sharedFrom}`,
    insertSharedQuiet: insertShared,
    insertRows: notifying(insertBatch),
    insertRowsQuiet: insertBatch,
    // One row with a unique key, notifying: a replaced runAt may be sooner.
    insertUniqueKeep: `${notifyPool} SELECT ${oneRow} FROM n ${onUnique} unique_key = excluded.unique_key RETURNING id`,
    insertUniqueReplace: `${notifyPool} SELECT ${oneRow} FROM n ${onUnique} ${REPLACED_SET}, parked = FALSE RETURNING id`,
    // See enqueue_claim() in schema.sql: the columns but the unique key (ROW_COLUMNS, which
    // work taking that path has not), then the channel, the worker, the claim's time and its lease end.
    enqueueClaim: `SELECT ${s}.enqueue_claim(${columnParams(ROW_COLUMNS)}, $${k + 1}::text, $${k + 2}::text, $${k + 3}::bigint, $${k + 4}::bigint) AS claimed`,
  };
}

type InsertStatements = Statements<ReturnType<typeof insertSql>>;

/** Which insert statement a batch of new work takes. */
export type InsertForm = "one" | "shared" | "rows";

/** The notifying and quiet insert statements for a batch of the given form. */
function formStatements(sql: InsertStatements, form: InsertForm): { notifying: Statement; quiet: Statement } {
  switch (form) {
    case "one":
      return { notifying: sql.insertOne, quiet: sql.insertOneQuiet };
    case "shared":
      return { notifying: sql.insertShared, quiet: sql.insertSharedQuiet };
    case "rows":
      return { notifying: sql.insertRows, quiet: sql.insertRowsQuiet };
  }
}

/**
 * The insert statement for `rows` and its parameters (in WORK_COLUMNS order): a single
 * row as scalars; rows that differ only in id and args (as one enqueue call makes them)
 * as two arrays and scalars; any other batch as one array per column (for unnest).
 */
export function insertParams(rows: readonly NewWork[]): { form: InsertForm; params: unknown[] } {
  const first = rows[0]!;
  if (rows.length === 1) return { form: "one", params: newWorkValues(first) };
  if (rows.every((r) => sharesColumns(r, first))) {
    const params: unknown[] = newWorkValues(first);
    params[at("id") - 1] = rows.map((r) => r.id);
    params[at("args") - 1] = rows.map((r) => r.args);
    return { form: "shared", params };
  }
  const perRow = rows.map(newWorkValues);
  return { form: "rows", params: perRow[0]!.map((_, i) => perRow.map((values) => values[i])) };
}

/** Writes new work for the PostgreSQL driver (its insertWork and insertAndClaim). */
export class PgWorkInserter {
  private readonly sql: InsertStatements;

  /**
   * @param schema the store's schema
   * @param channel the store's NOTIFY channel
   * @param notifier sends or coalesces the wake-ups of autocommit enqueues
   * @param txChecker checks the `tx` of enqueues
   * @param lifecycle whether the store is open, and its autocommit connection
   * @param transactions the handler's transaction the caller runs inside, if any
   */
  constructor(
    schema: string,
    private readonly channel: string,
    private readonly notifier: Notifier,
    private readonly txChecker: TxChecker,
    private readonly lifecycle: PgStoreLifecycle,
    private readonly transactions: PgTransactions,
  ) {
    this.sql = statementsOf(schema, insertSql);
  }

  /**
   * One statement for the whole batch. Without `tx` it commits on its own (autocommit)
   * and its wake-up may be coalesced with other enqueues' (see Notifier); with `tx` it
   * runs on the caller's client inside their transaction, and the work and its
   * notification exist only if they commit.
   */
  async insertWork(rows: readonly NewWork[], tx?: PoolClient | TransactionExecutor): Promise<string[]> {
    if (!rows.length) return [];
    if (rows[0]!.uniqueKey !== null) return [await this.insertUnique(rows, tx)];
    const { form, params } = insertParams(rows);
    const { notifying, quiet } = formStatements(this.sql, form);
    const ids = rows.map((r) => r.id);
    if (tx !== undefined) {
      this.lifecycle.checkOpen();
      await run(await this.txChecker.check(tx), notifying, [...params, this.channel]);
      return ids;
    }
    const joined = this.transactions.joinedClient();
    // Inside a handler's transaction: it commits later, with the handler's writes.
    if (joined) {
      await run(joined, notifying, [...params, this.channel]);
      return ids;
    }
    // Every row of one enqueue belongs to one pool.
    const pool = rows[0]!.pool;
    const inlineSince = this.notifier.notifyInline(pool);
    if (inlineSince !== null) {
      try {
        await run(this.lifecycle.db, notifying, [...params, this.channel]);
      } catch (e) {
        this.notifier.failedInline(pool);
        throw e;
      }
      this.notifier.committedInline(pool, inlineSince);
    } else {
      await run(this.lifecycle.db, quiet, params);
      this.notifier.committedQuietly(pool);
    }
    return ids;
  }

  /** One row with a unique key: one upsert statement (see insertUniqueKeep in statements.ts). Returns the id it resolved to. */
  private async insertUnique(rows: readonly NewWork[], tx?: PoolClient | TransactionExecutor): Promise<string> {
    if (rows.length !== 1) throw new Error("workpool: a row with a uniqueKey is inserted alone");
    const row = rows[0]!;
    const db =
      tx !== undefined
        ? (this.lifecycle.checkOpen(), await this.txChecker.check(tx))
        : (this.transactions.joinedClient() ?? this.lifecycle.db);
    const stmt = row.onConflict === "replace" ? this.sql.insertUniqueReplace : this.sql.insertUniqueKeep;
    const { rows: out } = await run<{ id: string }>(db, stmt, [...insertParams(rows).params, this.channel]);
    return out[0]!.id;
  }

  /** One statement in autocommit: see enqueue_claim() in schema.sql. */
  async insertAndClaim(row: NewWork, claim: ClaimOptions): Promise<WorkRow | null> {
    if (this.transactions.joinedClient()) {
      await this.insertWork([row]);
      return null;
    }
    // The columns but the unique key, which rows taking this path do not have.
    const time = new SendTime(claim);
    const { rows } = await run<{ claimed: boolean }>(this.lifecycle.db, this.sql.enqueueClaim, [
      ...rowValues(row),
      this.channel,
      claim.workerId,
      time.now,
      time.leaseUntil,
    ]);
    return rows[0]?.claimed ? claimedRow(row, 1, false, time.read()) : null;
  }
}
