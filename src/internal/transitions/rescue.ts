/**
 * The "worker lost" transition: a running attempt whose lease expired counts as a failed
 * attempt and goes through the outcome rule (retry with backoff, or a final failure).
 * Run by the maintenance leader, a batch per transaction; a batch the store refuses is
 * taken apart so that one refused row holds back no other.
 */
import type { WorkRow } from "../../driver/driver.js";
import type { CompletedEvent } from "../../events.js";
import type { PoolRuntime } from "../runtime.js";
import { fallbackTransition, refusalReason, type Refusals } from "./fallback.js";
import { decide, type Transition } from "./outcome.js";
import { applyTransitions } from "./write.js";

/** Most expired attempts rescued in one transaction. */
export const RESCUE_BATCH = 100;

/** The transition of an expired attempt, at the fallback level its past refusals reached. */
function rescueTransition<Tx>(rt: PoolRuntime<Tx>, refusals: Refusals, row: WorkRow, now: number): Transition {
  const expiredAt = new Date(row.leaseUntil ?? now).toISOString();
  const outcome = {
    kind: "failed" as const,
    error: `worker lost: attempt ${row.attempt} stopped renewing its lease (expired at ${expiredAt})`,
    retryable: true,
  };
  const t = decide(rt, row, outcome, now, true);
  const level = refusals.level(row.id);
  return level ? fallbackTransition(t, level, refusalReason(row.attempt, refusals.lastError(row.id))) : t;
}

/** Rescues every attempt of the pool whose lease ended before `now`. Returns the events to emit. */
export async function rescueExpired<Tx>(rt: PoolRuntime<Tx>, refusals: Refusals, now: number): Promise<CompletedEvent[]> {
  const all: CompletedEvent[] = [];
  for (;;) {
    let events: CompletedEvent[];
    try {
      events = await rt.driver.transaction(async (ops) => {
        const rows = await ops.lockExpired(rt.pool, now, RESCUE_BATCH);
        return applyTransitions(
          rt,
          ops,
          rows.map((row) => rescueTransition(rt, refusals, row, now)),
          now,
        );
      });
    } catch (e) {
      if (rt.driver.isTransientError(e)) throw e;
      rt.logger.warn(`workpool: the store refused a batch of rescues in pool "${rt.pool}"; rescuing them one by one`, e);
      return [...all, ...(await rescueOneByOne(rt, refusals, now))];
    }
    all.push(...events);
    if (events.length < RESCUE_BATCH) return all;
  }
}

/** Each expired attempt in a transaction of its own. */
async function rescueOneByOne<Tx>(rt: PoolRuntime<Tx>, refusals: Refusals, now: number): Promise<CompletedEvent[]> {
  const expired = await rt.driver.transaction((ops) => ops.lockExpired(rt.pool, now, RESCUE_BATCH));
  const all: CompletedEvent[] = [];
  for (const candidate of expired) {
    const events = await refusals.isolate(rt, candidate, [] as CompletedEvent[], () =>
      rt.driver.transaction(async (ops) => {
        const [row] = await ops.lockWork(rt.pool, [candidate.id]);
        if (!row || row.state !== "running" || row.attempt !== candidate.attempt || (row.leaseUntil ?? 0) >= now) return [];
        return applyTransitions(rt, ops, [rescueTransition(rt, refusals, row, now)], now);
      }),
    );
    all.push(...events);
  }
  return all;
}
