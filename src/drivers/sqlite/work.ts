/**
 * Work rows on SQLite (WorkOps in the driver interface): enqueue (insert.ts), claim
 * (claim.ts), results (complete.ts), leases, reads, transactions (tx-ops.ts) and
 * retention, each run on the store's connection as its access rules say.
 */
import type { Database } from "better-sqlite3";
import type {
  AttemptRef,
  CancelableFilter,
  ClaimOptions,
  ClaimResult,
  CompleteResult,
  CompletionWrite,
  HeartbeatResult,
  LeaseRenewal,
  NewWork,
  TxOps,
  WorkOps,
  WorkRow,
} from "../../driver/driver.js";
import type { TransactionExecutor } from "../../driver/tx-executor.js";
import type { SqliteClaim } from "./claim.js";
import { SqliteComplete } from "./complete.js";
import type { SqliteConnectionAccess } from "./connection/connection-access.js";
import type { PoolWakeups } from "./connection/wakeups.js";
import { SqliteWorkInserter } from "./insert.js";
import { toWorkRow, type SqliteWorkRow } from "./rows.js";
import { prepared, type Prepared } from "./statements.js";
import { TX_SQL } from "./tx-ops.js";

const SQL = {
  heartbeatRead: `SELECT id, state, attempt, worker_id, cancel_requested FROM workpool_work
    WHERE pool = ? AND id IN (SELECT value FROM json_each(?))`,
  extendLease: `UPDATE workpool_work SET lease_until = ? WHERE id = ? AND attempt = ? AND state = 'running'`,
  cancelablePending: `SELECT id FROM workpool_work
    WHERE pool = @pool AND state = 'pending' AND enqueued_at < @before AND (@fn IS NULL OR fn_name = @fn)
      AND (@key IS NULL OR key = @key) ORDER BY id LIMIT @limit`,
  cancelableRunning: `SELECT id FROM workpool_work
    WHERE pool = @pool AND state = 'running' AND cancel_requested = 0 AND enqueued_at < @before AND (@fn IS NULL OR fn_name = @fn)
      AND (@key IS NULL OR key = @key) ORDER BY id LIMIT @limit`,
  deleteFinishedBefore: `DELETE FROM workpool_work WHERE id IN (
    SELECT id FROM workpool_work
    WHERE pool = ? AND state = 'finished' AND finished_at < ? AND oc_state <> 'pending'
    ORDER BY finished_at LIMIT ?)`,
  deleteFinishedIds: `DELETE FROM workpool_work
    WHERE pool = ? AND id IN (SELECT value FROM json_each(?)) AND state = 'finished' AND oc_state <> 'pending'
    RETURNING id`,
} as const;

/** The work operations of the SQLite driver, on the store's connection. */
export class SqliteWork implements WorkOps<Database> {
  private readonly sql: Prepared<typeof SQL>;
  /** SQLite has no row locks (the write lock covers the whole file), so a read is the transaction's lockWork. */
  private readonly readRows: Prepared<typeof TX_SQL>["lockWork"];
  private readonly completer: SqliteComplete;
  private readonly inserter: SqliteWorkInserter;

  /**
   * @param db the store's connection
   * @param access runs the operations on it one user at a time
   * @param wakeups this process's workers to wake once work is written
   * @param claimer the claim on it
   * @param isClosed whether the store has been closed
   */
  constructor(
    db: Database,
    private readonly access: SqliteConnectionAccess,
    wakeups: PoolWakeups,
    private readonly claimer: SqliteClaim,
    isClosed: () => boolean,
  ) {
    this.sql = prepared(db, SQL);
    this.readRows = prepared(db, TX_SQL).lockWork;
    this.completer = new SqliteComplete(db, claimer);
    this.inserter = new SqliteWorkInserter(db, access, wakeups, isClosed);
  }

  claim(pool: string, opts: ClaimOptions): Promise<ClaimResult> {
    return this.access.write(() => this.claimer.claim(pool, opts));
  }

  /** One write transaction, no read-back: see complete.ts. */
  complete(pool: string, writes: readonly CompletionWrite[], now: number, claim: ClaimOptions | null): Promise<CompleteResult> {
    return this.access.write(() => this.completer.complete(pool, writes, now, claim));
  }

  deleteFinishedBefore(pool: string, before: number, limit: number): Promise<number> {
    return this.access.write(() => this.sql.deleteFinishedBefore.run(pool, before, limit).changes);
  }

  deleteFinishedIds(pool: string, ids: readonly string[]): Promise<string[]> {
    return this.access.write(() => (this.sql.deleteFinishedIds.all(pool, JSON.stringify(ids)) as { id: string }[]).map((r) => r.id));
  }

  heartbeat(pool: string, workerId: string, refs: readonly AttemptRef[], lease: LeaseRenewal): Promise<HeartbeatResult> {
    return this.access.write(() => {
      const leaseUntil = lease.clock() + lease.leaseMs;
      const rows = this.sql.heartbeatRead.all(pool, JSON.stringify(refs.map((r) => r.id))) as Pick<
        SqliteWorkRow,
        "id" | "state" | "attempt" | "worker_id" | "cancel_requested"
      >[];
      const byId = new Map(rows.map((r) => [r.id, r]));
      const result: HeartbeatResult = { cancelRequested: [], lost: [] };
      for (const ref of refs) {
        const row = byId.get(ref.id);
        if (!row || row.state !== "running" || row.attempt !== ref.attempt || row.worker_id !== workerId) {
          result.lost.push(ref);
          continue;
        }
        this.sql.extendLease.run(leaseUntil, ref.id, ref.attempt);
        if (row.cancel_requested) result.cancelRequested.push(ref);
      }
      return result;
    });
  }

  /** See insert.ts: on the store's connection, synchronously in the caller's `tx`, or through a transaction executor. */
  insertWork(rows: readonly NewWork[], tx?: Database | TransactionExecutor): Promise<string[]> {
    return this.inserter.insertWork(rows, tx);
  }

  listCancelable(pool: string, before: number, limit: number, filter: CancelableFilter = {}): Promise<string[]> {
    return this.access.read(() => {
      const fn = filter.fnName ?? null;
      const key = filter.key ?? null;
      const pending = this.sql.cancelablePending.all({ pool, before, limit, fn, key }) as { id: string }[];
      const rest = filter.pendingOnly ? 0 : Math.max(0, limit - pending.length);
      const running = rest ? (this.sql.cancelableRunning.all({ pool, before, limit: rest, fn, key }) as { id: string }[]) : [];
      return [...pending, ...running].map((r) => r.id);
    });
  }

  readWork(pool: string, ids: readonly string[]): Promise<WorkRow[]> {
    return this.access.read(() => (this.readRows.all(pool, JSON.stringify(ids)) as SqliteWorkRow[]).map(toWorkRow));
  }

  /** BEGIN IMMEDIATE ... COMMIT under the connection's lock; nested in one of ours, a savepoint. */
  transaction<T>(fn: (ops: TxOps<Database>) => Promise<T>): Promise<T> {
    return this.access.transaction(fn);
  }
}
