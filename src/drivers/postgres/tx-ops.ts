/**
 * The operations of one PostgreSQL transaction (see TxOps in the driver interface), run
 * on the client that holds it. Each batch write is one statement.
 */
import type { PoolClient } from "pg";
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
import { claimOn, type ClaimKeys } from "./claim.js";
import { run } from "./connection.js";
import { toWorkRow, type PgWorkRow } from "./rows.js";
import type { Statements } from "./statements.js";

let savepointSeq = 0;

/** TxOps bound to `client`, which is inside BEGIN. */
export class PgTxOps implements TxOps<PoolClient> {
  constructor(
    readonly tx: PoolClient,
    private readonly stmts: Statements,
    private readonly channel: string,
    private readonly claimKeys: ClaimKeys,
  ) {}

  /**
   * Claims inside this transaction (a completion batch claiming the slots it frees). The
   * pool row stays locked until this transaction commits, which follows at once.
   */
  claim(pool: string, opts: ClaimOptions): Promise<ClaimResult> {
    return claimOn(this.tx, this.stmts, this.claimKeys, pool, opts);
  }

  async lockWork(pool: string, ids: readonly string[]): Promise<WorkRow[]> {
    if (!ids.length) return [];
    return (await run<PgWorkRow>(this.tx, this.stmts.lockWork, [pool, ids])).rows.map(toWorkRow);
  }

  async lockExpired(pool: string, now: number, limit: number): Promise<WorkRow[]> {
    const rows = (await run<PgWorkRow>(this.tx, this.stmts.lockExpired, [pool, now, limit])).rows.map(toWorkRow);
    // These attempts are about to leave `running` in this transaction (retry or finish),
    // freeing slots: wake the other workers when it commits.
    if (rows.length) await run(this.tx, this.stmts.notify, [this.channel, pool]);
    return rows;
  }

  async lockOnCompleteDue(pool: string, now: number, limit: number): Promise<WorkRow[]> {
    return (await run<PgWorkRow>(this.tx, this.stmts.lockOnCompleteDue, [pool, now, limit])).rows.map(toWorkRow);
  }

  async finish(rows: readonly FinishWrite[]): Promise<void> {
    if (!rows.length) return;
    await run(this.tx, this.stmts.finish, [
      rows.map((r) => r.id),
      rows.map((r) => r.result),
      rows.map((r) => r.finishedAt),
      rows.map((r) => r.ocState),
      rows.map((r) => r.attemptEntry ?? null),
    ]);
  }

  async reschedule(rows: readonly RescheduleWrite[]): Promise<void> {
    if (!rows.length) return;
    await run(this.tx, this.stmts.reschedule, [
      rows.map((r) => r.id),
      rows.map((r) => r.runAt),
      rows.map((r) => r.attemptEntry ?? null),
      this.channel,
    ]);
  }

  async release(refs: readonly AttemptRef[], runAt: number): Promise<void> {
    if (!refs.length) return;
    await run(this.tx, this.stmts.release, [refs.map((r) => r.id), refs.map((r) => r.attempt), runAt, this.channel]);
  }

  async requestCancel(ids: readonly string[]): Promise<void> {
    if (!ids.length) return;
    await run(this.tx, this.stmts.requestCancel, [ids]);
  }

  async updateOnComplete(rows: readonly OnCompleteWrite[]): Promise<void> {
    if (!rows.length) return;
    await run(this.tx, this.stmts.updateOnComplete, [
      rows.map((r) => r.id),
      rows.map((r) => r.ocState),
      rows.map((r) => r.ocAttempts),
      rows.map((r) => r.ocRunAt),
      rows.map((r) => r.ocError),
    ]);
  }

  async addStats(pool: string, d: PoolStats): Promise<void> {
    if (!d.completed && !d.succeeded && !d.failed && !d.retries && !d.canceled) return;
    await run(this.tx, this.stmts.addStats, [pool, d.completed, d.succeeded, d.failed, d.retries, d.canceled]);
  }

  /**
   * SAVEPOINT / RELEASE, or ROLLBACK TO on error. ROLLBACK TO also clears PostgreSQL's
   * "current transaction is aborted" state when the handler's own statement failed, so
   * the transaction stays usable for recording the failure.
   */
  async savepoint<T>(fn: () => Promise<T> | T): Promise<T> {
    const name = `workpool_sp_${++savepointSeq}`;
    await this.tx.query(`SAVEPOINT ${name}`);
    let result: T;
    try {
      result = await fn();
    } catch (e) {
      await this.tx.query(`ROLLBACK TO SAVEPOINT ${name}`);
      await this.tx.query(`RELEASE SAVEPOINT ${name}`);
      throw e;
    }
    await this.tx.query(`RELEASE SAVEPOINT ${name}`);
    return result;
  }
}
