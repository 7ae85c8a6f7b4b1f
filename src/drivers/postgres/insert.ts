/**
 * Enqueue on PostgreSQL: a batch of new work is one statement, run in the caller's
 * transaction (`tx`), in the handler's transaction the caller runs inside, or in
 * autocommit with its wake-up sent inline or coalesced with other enqueues' (see
 * Notifier); a row with a unique key is one upsert; and one row may be inserted and
 * claimed together (see enqueue_claim() in schema.sql).
 */
import type { PoolClient } from "pg";
import type { ClaimOptions, NewWork, WorkRow } from "../../driver/driver.js";
import { SendTime } from "./send-time.js";
import type { TransactionExecutor } from "../../driver/tx-executor.js";
import { run } from "./connection.js";
import type { PgStoreLifecycle } from "./lifecycle.js";
import type { Notifier } from "./notifier.js";
import { claimedRow, insertParams } from "./rows.js";
import { insertStatements, type Statements } from "./statements.js";
import type { PgTransactions } from "./transactions.js";
import type { TxChecker } from "./tx-check.js";

/** Writes new work for the PostgreSQL driver (its insertWork and insertAndClaim). */
export class PgWorkInserter {
  /**
   * @param stmts the store's statements
   * @param channel the store's NOTIFY channel
   * @param notifier sends or coalesces the wake-ups of autocommit enqueues
   * @param txChecker checks the `tx` of enqueues
   * @param lifecycle whether the store is open, and its autocommit connection
   * @param transactions the handler's transaction the caller runs inside, if any
   */
  constructor(
    private readonly stmts: Statements,
    private readonly channel: string,
    private readonly notifier: Notifier,
    private readonly txChecker: TxChecker,
    private readonly lifecycle: PgStoreLifecycle,
    private readonly transactions: PgTransactions,
  ) {}

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
    const { notifying, quiet } = insertStatements(this.stmts, form);
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
    const stmt = row.onConflict === "replace" ? this.stmts.insertUniqueReplace : this.stmts.insertUniqueKeep;
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
    const params = [...insertParams([row]).params.slice(0, 15), this.channel, claim.workerId, time.now, time.leaseUntil];
    const { rows } = await run<{ claimed: boolean }>(this.lifecycle.db, this.stmts.enqueueClaim, params);
    return rows[0]?.claimed ? claimedRow(row, 1, false, time.read()) : null;
  }
}
