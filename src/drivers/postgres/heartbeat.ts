/**
 * heartbeat(): a worker's leases extended in one statement, fenced by attempt; the
 * attempts it no longer holds and those whose work was canceled come back with it.
 */
import type { AttemptRef, HeartbeatResult, LeaseRenewal } from "../../driver/driver.js";
import { late } from "./send-time.js";
import { run, type Queryable } from "./connection.js";
import type { Statements } from "./statements.js";

/** Extends the leases of `refs` (at least one) held by `workerId` on `db`; reports canceled and lost attempts. */
export async function heartbeatOn(
  db: Queryable,
  stmts: Statements,
  pool: string,
  workerId: string,
  refs: readonly AttemptRef[],
  lease: LeaseRenewal,
): Promise<HeartbeatResult> {
  const result: HeartbeatResult = { cancelRequested: [], lost: [] };
  const { rows } = await run<{ id: string; cancel_requested: boolean }>(db, stmts.heartbeat, [
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
