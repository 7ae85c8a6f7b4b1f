/**
 * `claim-time` and `no-false-loss`: when the store says an attempt started and how long
 * its lease runs, and why a worker gave an attempt up. Both compare what a store call of
 * a step did with the rows read right after that step: one store call runs per step, so
 * those rows are the ones the call left (see docs/testing.md).
 */
import type { WorkRow } from "../../src/driver/driver.js";
import type { ClaimSeen, HeartbeatSeen } from "./faulty-driver.js";
import { Violation } from "./violation.js";

/** An action attempt its worker aborted as lost (its signal's reason said so). */
export interface LostAbort {
  proc: string;
  id: string;
  attempt: number;
}

/**
 * `claim-time`: a claim's time is the simulated time at which it ran in the store (the
 * store reads the clock once it holds the store, and the clock does not move during a
 * step), every attempt it started has `startedAt` at that time and `leaseUntil` a lease
 * later, and every lease a heartbeat renewed ends a lease after the heartbeat ran.
 * Claims whose transaction wrote after them are checked too: no later write of one
 * transaction moves a claimed row's start or lease.
 */
export function checkClaimTimes(
  claims: readonly ClaimSeen[],
  heartbeats: readonly HeartbeatSeen[],
  byId: ReadonlyMap<string, WorkRow>,
  leaseMs: number,
  label: (id: string) => string,
  t0: number,
): void {
  const at = (t: number | null): string => (t === null ? "none" : `t+${t - t0}`);
  for (const c of claims) {
    const what = `${c.proc} ${c.method} that ran at ${at(c.ranAt)}`;
    if (c.now !== c.ranAt) throw new Violation("claim-time", `${what} answered with the time ${at(c.now)}`);
    c.claimed.forEach((id, i) => {
      const row = byId.get(id);
      // Gone or moved on within the step: nothing left to compare (the claim's own answer was checked).
      if (!row || row.state !== "running" || row.attempt !== c.attempts[i]) return;
      if (row.startedAt !== c.ranAt || row.leaseUntil !== c.ranAt + leaseMs) {
        throw new Violation(
          "claim-time",
          `${what} started ${label(id)}#${row.attempt} at ${at(row.startedAt)} with its lease until ${at(row.leaseUntil)} (lease ${leaseMs} ms)`,
        );
      }
    });
  }
  for (const h of heartbeats) {
    const lost = new Set(h.lost.map((r) => `${r.id}#${r.attempt}`));
    for (const ref of h.refs) {
      const row = byId.get(ref.id);
      if (lost.has(`${ref.id}#${ref.attempt}`) || !row || row.state !== "running" || row.attempt !== ref.attempt) continue;
      if (row.workerId !== h.workerId) continue;
      if (row.leaseUntil !== h.ranAt + leaseMs) {
        throw new Violation(
          "claim-time",
          `${h.proc} heartbeat that ran at ${at(h.ranAt)} left ${label(ref.id)}#${ref.attempt}'s lease until ${at(row.leaseUntil)} (lease ${leaseMs} ms)`,
        );
      }
    }
  }
}

/**
 * `no-false-loss`: a worker aborts an attempt as lost only when its row no longer runs
 * that attempt for that worker. The abort follows a heartbeat's answer in the same step,
 * so the rows read after the step are those the heartbeat read.
 */
export function checkLosses(
  aborts: readonly LostAbort[],
  byId: ReadonlyMap<string, WorkRow>,
  workerIds: ReadonlyMap<string, string>,
  label: (id: string) => string,
): void {
  for (const a of aborts) {
    const row = byId.get(a.id);
    const worker = workerIds.get(a.proc);
    if (row && row.state === "running" && row.attempt === a.attempt && worker !== undefined && row.workerId === worker) {
      throw new Violation(
        "no-false-loss",
        `${a.proc} aborted ${label(a.id)}#${a.attempt} as lost, but its row still runs that attempt for ${a.proc}`,
      );
    }
  }
}
