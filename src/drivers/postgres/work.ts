/**
 * Work rows on PostgreSQL (WorkOps in the driver interface): enqueue (insert.ts), claim
 * (claim.ts), results (complete.ts), leases, reads, transactions (tx-ops.ts), retention
 * and the work table's vacuum (vacuum.ts). Everything that can be one statement is one
 * statement in autocommit; batches are arrays, never one statement per row.
 */
import type { PoolClient } from "pg";
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
import { claimOn, type ClaimKeys } from "./claim.js";
import { completeOn } from "./complete.js";
import { run } from "./connection.js";
import type { PgConnections } from "./connection/connections.js";
import type { PgTransactions } from "./connection/transactions.js";
import type { PgWorkInserter } from "./insert.js";
import { toWorkRow, WORK_SELECT, type PgWorkRow } from "./rows.js";
import { late } from "./send-time.js";
import { statementsOf, type Statements } from "./statements.js";
import type { Vacuumer } from "./vacuum.js";

function workSql(s: string) {
  const work = `${s}.work`;
  return {
    // Renews leases still held by this worker on this attempt. Rows locked by another
    // transaction (this worker's own mutation, a commit of results) are skipped rather
    // than waited for; they are reported as held, not lost. $1 pool, $2 ids, $3 attempts,
    // $4 worker, $5 lease_until.
    heartbeat: `WITH refs AS (
      SELECT r.id, r.attempt FROM unnest($2::text[], $3::int[]) AS r(id, attempt)
    ), mine AS (
      SELECT w.id, w.cancel_requested FROM ${work} w JOIN refs r ON r.id = w.id AND r.attempt = w.attempt
      WHERE w.pool = $1::text AND w.state = 'running' AND w.worker_id = $4::text
    ), renewed AS (
      UPDATE ${work} w SET lease_until = $5::bigint
      FROM refs r
      WHERE w.id = r.id AND w.attempt = r.attempt AND w.state = 'running' AND w.worker_id = $4::text
        AND w.id IN (SELECT id FROM ${work} WHERE id IN (SELECT id FROM mine) FOR UPDATE SKIP LOCKED)
      RETURNING w.id
    )
    SELECT m.id, m.cancel_requested FROM mine m`,
    readWork: `SELECT ${WORK_SELECT} FROM ${work} WHERE pool = $1::text AND id = ANY($2::text[])`,
    // $4 handler (NULL: any), $5 pending work only, $6 key (NULL: any).
    listCancelable: `SELECT id FROM (
        (SELECT id, 0 AS k FROM ${work}
         WHERE pool = $1::text AND state = 'pending' AND enqueued_at < $2::bigint AND ($4::text IS NULL OR fn_name = $4::text)
           AND ($6::text IS NULL OR key = $6::text)
         ORDER BY id LIMIT $3::int)
        UNION ALL
        (SELECT id, 1 AS k FROM ${work}
         WHERE pool = $1::text AND state = 'running' AND NOT cancel_requested AND enqueued_at < $2::bigint
           AND ($4::text IS NULL OR fn_name = $4::text) AND ($6::text IS NULL OR key = $6::text) AND NOT $5::boolean
         ORDER BY id LIMIT $3::int)
      ) c ORDER BY k, id LIMIT $3::int`,
    deleteFinishedBefore: `DELETE FROM ${work} WHERE id IN (
      SELECT id FROM ${work}
      WHERE pool = $1::text AND state = 'finished' AND finished_at < $2::bigint AND oc_state <> 'pending'
      ORDER BY finished_at LIMIT $3::int FOR UPDATE SKIP LOCKED)`,
    deleteFinishedIds: `DELETE FROM ${work}
      WHERE pool = $1::text AND id = ANY($2::text[]) AND state = 'finished' AND oc_state <> 'pending'
      RETURNING id`,
  };
}

/** What the work operations run on and with. */
export interface PgWorkParts {
  /** The store's schema and NOTIFY channel. */
  schema: string;
  channel: string;
  /** Where statements run. */
  conn: PgConnections;
  /** Our transactions. */
  transactions: PgTransactions;
  /** The enqueue paths. */
  inserter: PgWorkInserter;
  /** Where this process's next claim of each pool starts its walk of the pending index. */
  claimKeys: ClaimKeys;
  /** When the maintenance leader vacuums the work table; null: never. */
  vacuumer: Vacuumer | null;
}

/** The work operations of the PostgreSQL driver. */
export class PgWork implements WorkOps<PoolClient> {
  private readonly sql: Statements<ReturnType<typeof workSql>>;

  constructor(private readonly parts: PgWorkParts) {
    this.sql = statementsOf(parts.schema, workSql);
  }

  /** One statement in autocommit: see claim() in schema.sql. */
  claim(pool: string, opts: ClaimOptions): Promise<ClaimResult> {
    return claimOn(this.parts.conn.db, this.parts.schema, this.parts.claimKeys, pool, opts);
  }

  /** One statement in autocommit: see complete() in schema.sql. */
  complete(pool: string, writes: readonly CompletionWrite[], now: number, claim: ClaimOptions | null): Promise<CompleteResult> {
    const { conn, schema, claimKeys, channel } = this.parts;
    return completeOn(conn.db, schema, claimKeys, channel, pool, writes, now, claim);
  }

  async deleteFinishedBefore(pool: string, before: number, limit: number): Promise<number> {
    return (await run(this.parts.conn.db, this.sql.deleteFinishedBefore, [pool, before, limit])).rowCount;
  }

  async deleteFinishedIds(pool: string, ids: readonly string[]): Promise<string[]> {
    if (!ids.length) return [];
    return (await run<{ id: string }>(this.parts.conn.app, this.sql.deleteFinishedIds, [pool, ids])).rows.map((r) => r.id);
  }

  /** One statement, fenced by attempt: the attempts no longer held and those whose work was canceled come back with it. */
  async heartbeat(pool: string, workerId: string, refs: readonly AttemptRef[], lease: LeaseRenewal): Promise<HeartbeatResult> {
    const result: HeartbeatResult = { cancelRequested: [], lost: [] };
    if (!refs.length) return result;
    const { rows } = await run<{ id: string; cancel_requested: boolean }>(this.parts.conn.db, this.sql.heartbeat, [
      pool,
      refs.map((r) => r.id),
      refs.map((r) => r.attempt),
      workerId,
      // Read when the statement is sent: a wait for a connection does not shorten the leases.
      late(() => lease.clock() + lease.leaseMs),
    ]);
    const held = new Map(rows.map((r) => [r.id, r.cancel_requested]));
    for (const ref of refs) {
      const cancel = held.get(ref.id);
      if (cancel === undefined) result.lost.push(ref);
      else if (cancel) result.cancelRequested.push(ref);
    }
    return result;
  }

  /** One statement in autocommit: see enqueue_claim() in schema.sql. */
  insertAndClaim(row: NewWork, claim: ClaimOptions): Promise<WorkRow | null> {
    return this.parts.inserter.insertAndClaim(row, claim);
  }

  /** See insert.ts: one statement per batch, in `tx`, in the handler's transaction, or in autocommit. */
  insertWork(rows: readonly NewWork[], tx?: PoolClient | TransactionExecutor): Promise<string[]> {
    return this.parts.inserter.insertWork(rows, tx);
  }

  async listCancelable(pool: string, before: number, limit: number, filter: CancelableFilter = {}): Promise<string[]> {
    const params = [pool, before, limit, filter.fnName ?? null, filter.pendingOnly ?? false, filter.key ?? null];
    return (await run<{ id: string }>(this.parts.conn.app, this.sql.listCancelable, params)).rows.map((r) => r.id);
  }

  async readWork(pool: string, ids: readonly string[]): Promise<WorkRow[]> {
    if (!ids.length) return [];
    return (await run<PgWorkRow>(this.parts.conn.app, this.sql.readWork, [pool, ids])).rows.map(toWorkRow);
  }

  /** BEGIN ... COMMIT on a client of the pool; nested in one of ours (cancel() from a mutation), a savepoint. */
  transaction<T>(fn: (ops: TxOps<PoolClient>) => Promise<T>): Promise<T> {
    return this.parts.transactions.run(() => this.parts.conn.pool, fn);
  }

  /** See vacuum.ts: VACUUM of the work table once its dead rows pass the threshold. */
  async vacuum(now: number): Promise<boolean> {
    return this.parts.vacuumer ? this.parts.vacuumer.maybeVacuum(this.parts.conn.pool, now) : false;
  }
}
