/**
 * Bounded waiting on the pool's clock, for shutdown steps that talk to a store which may
 * be unreachable: stop() must end even when the database does not answer.
 */
import type { Clock, TimerHandle } from "../clock.js";

/**
 * Waits for `work` for at most `ms` of `clock`'s time. Resolves true if it settled in
 * time (its rejection is passed on), false if the time ran out first; `work` itself
 * goes on either way.
 */
export async function within(clock: Clock, work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: TimerHandle | null = null;
  const timedOut = new Promise<false>((resolve) => (timer = clock.setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([work.then(() => true as const), timedOut]);
  } finally {
    if (timer) clock.clearTimeout(timer);
  }
}
