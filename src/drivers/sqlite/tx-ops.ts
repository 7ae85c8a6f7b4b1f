/**
 * The operations of an SQLite transaction (see TxOps in the driver interface).
 * better-sqlite3 is synchronous: every operation runs its statements
 * at once on the connection that holds the transaction.
 */
import type { Database } from "better-sqlite3";
import type {
  AttemptRef,
  ClaimOptions,
  ClaimResult,
  FinishWrite,
  OnCompleteWrite,
  PoolStats,
  RescheduleWrite,
  TxOps,
  WorkRow,
} from "../../driver/driver.js";
import { claimRows } from "./claim.js";
import { toWorkRow, type SqliteWorkRow } from "./rows.js";
import type { Statements } from "./statements.js";

const readRows = (rows: unknown[]): WorkRow[] => (rows as SqliteWorkRow[]).map(toWorkRow);

/** TxOps on the store's connection, inside the transaction it holds. */
export class SqliteTxOps implements TxOps<Database> {
  private savepointSeq = 0;

  constructor(
    readonly tx: Database,
    private readonly stmts: Statements,
  ) {}

  async claim(pool: string, opts: ClaimOptions): Promise<ClaimResult> {
    return claimRows(this.stmts, pool, opts);
  }

  async lockWork(pool: string, ids: readonly string[]): Promise<WorkRow[]> {
    return readRows(this.stmts.readWork.all(pool, JSON.stringify(ids)));
  }

  async lockExpired(pool: string, now: number, limit: number): Promise<WorkRow[]> {
    return readRows(this.stmts.expired.all(pool, now, limit));
  }

  async lockOnCompleteDue(pool: string, now: number, limit: number): Promise<WorkRow[]> {
    return readRows(this.stmts.onCompleteDue.all(pool, now, limit));
  }

  async finish(rows: readonly FinishWrite[]): Promise<void> {
    for (const r of rows) {
      const params = { id: r.id, result: r.result, finished_at: r.finishedAt, entry: r.attemptEntry ?? null };
      // A running row's oc_state is 'none': written only when it changes (see the statements).
      if (r.ocState === "none") this.stmts.finish.run(params);
      else this.stmts.finishOnComplete.run({ ...params, oc_state: r.ocState });
    }
  }

  async reschedule(rows: readonly RescheduleWrite[]): Promise<void> {
    for (const r of rows) this.stmts.reschedule.run({ id: r.id, run_at: r.runAt, entry: r.attemptEntry ?? null });
  }

  async release(refs: readonly AttemptRef[], runAt: number): Promise<void> {
    for (const r of refs) this.stmts.release.run(runAt, r.id, r.attempt);
  }

  async requestCancel(ids: readonly string[]): Promise<void> {
    for (const id of ids) this.stmts.requestCancel.run(id);
  }

  async updateOnComplete(rows: readonly OnCompleteWrite[]): Promise<void> {
    for (const r of rows) {
      this.stmts.updateOnComplete.run({
        id: r.id,
        oc_state: r.ocState,
        oc_attempts: r.ocAttempts,
        oc_run_at: r.ocRunAt,
        oc_error: r.ocError,
      });
    }
  }

  async addStats(pool: string, d: PoolStats): Promise<void> {
    this.stmts.addStats.run({ pool, ...d });
  }

  async savepoint<T>(fn: () => Promise<T> | T): Promise<T> {
    const name = `workpool_sp_${++this.savepointSeq}`;
    this.tx.exec(`SAVEPOINT ${name}`);
    try {
      const result = await fn();
      this.tx.exec(`RELEASE ${name}`);
      return result;
    } catch (e) {
      // The handler may have ended the transaction itself (e.g. by running COMMIT).
      if (this.tx.inTransaction) this.tx.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
      throw e;
    }
  }
}
