/**
 * The enqueue transition: new work written `pending`, in its own transaction or in the
 * caller's (`tx`), so it exists if and only if that transaction commits. On a store with
 * `insertAndClaim`, an enqueue by a process whose worker has room may write the row
 * already `running` for that worker (the claim transition in the same transaction).
 */
import type { ClaimOptions, NewWork, WorkRow } from "../../driver/driver.js";
import type { TransactionExecutor } from "../../driver/tx-executor.js";
import type { PoolRuntime } from "../runtime.js";

/**
 * Writes `rows` pending, inside `tx` when given, and resolves with the id each row stands
 * for (its own, or that of pending work with its uniqueKey). On a store whose `tx` writes
 * are synchronous (SQLite) the rows are written, or an error thrown, before this returns.
 */
export function insertWork<Tx>(rt: PoolRuntime<Tx>, rows: readonly NewWork[], tx: Tx | TransactionExecutor | undefined): Promise<string[]> {
  return rt.driver.insertWork(rows, tx);
}

/**
 * Writes `row` and, when the pool has a free slot and no other due work waits, claims it
 * for `claim.workerId` in the same transaction (see Driver.insertAndClaim). Returns the
 * row as claimed, or null when it was left pending.
 */
export function insertAndClaim<Tx>(rt: PoolRuntime<Tx>, row: NewWork, claim: ClaimOptions): Promise<WorkRow | null> {
  return rt.driver.insertAndClaim!(row, claim);
}
