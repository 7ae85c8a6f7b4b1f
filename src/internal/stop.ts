/**
 * How a worker stops. The store may be unreachable by then, so each step waits at most
 * leaseMs: by then the leases of the attempts involved have lapsed, they will be rescued,
 * and a late write would be fenced off anyway.
 */
import type { Attempts } from "./attempts.js";
import type { Completer } from "./completer.js";
import type { Maintenance } from "./maintenance.js";
import type { Scheduler } from "../cron/loop.js";
import type { PoolRuntime } from "./runtime.js";
import { within } from "./within.js";

/** The parts of a worker that stop() takes down. */
export interface StoppableWorker<Tx> {
  readonly attempts: Attempts<Tx>;
  readonly completer: Completer<Tx>;
  readonly maintenance: Maintenance<Tx>;
  readonly scheduler: Scheduler<Tx>;
  /** Settles when the claims and enqueue-claims sent before stop() (and their hand-backs) have. */
  callsInFlight(): Promise<void>;
}

/** Waits at most leaseMs for one step of stop(); calls `failed` if it rejected or took longer. */
async function step<Tx>(rt: PoolRuntime<Tx>, work: Promise<unknown>, failed: (e: unknown) => void): Promise<void> {
  const { clock, leaseMs } = rt.options;
  try {
    if (!(await within(clock, work, leaseMs))) failed(new Error(`no answer from the store in ${leaseMs} ms`));
  } catch (e) {
    failed(e);
  }
}

/**
 * Takes a worker down, in order: the calls already sent (a claim, whose rows go back
 * unstarted; an enqueue claiming for this worker; a schedule pass; a maintenance tick, which might
 * otherwise take leadership again after it was released, perhaps after the store was
 * closed), then waits up to `timeoutMs` for running attempts, hands the rest back, writes
 * the queued results, stops the heartbeat and gives up maintenance leadership.
 */
export async function stopWorker<Tx>(rt: PoolRuntime<Tx>, worker: StoppableWorker<Tx>, timeoutMs: number): Promise<void> {
  const { clock, leaseMs } = rt.options;
  const { logger, pool } = rt;
  await step(rt, Promise.all([worker.callsInFlight(), worker.maintenance.stop(), worker.scheduler.stop()]), () =>
    logger.error(
      `workpool: stop gave up waiting for a claim, enqueue or maintenance call of pool "${pool}" after ${leaseMs} ms; ` +
        "work it claims later goes back to the queue, or is rescued once its lease expires",
    ),
  );
  if (worker.attempts.size && timeoutMs > 0) await within(clock, worker.attempts.settled(), timeoutMs);
  await step(rt, worker.attempts.handBack(), (e) =>
    logger.error(
      `workpool: stop could not hand back the running attempts of pool "${pool}"; they will be rescued once their leases expire`,
      e,
    ),
  );
  await step(rt, worker.completer.flush(), () => {
    const dropped = worker.completer.abandon();
    logger.error(
      `workpool: stop gave up writing ${dropped} result(s) of pool "${pool}" after ${leaseMs} ms; their attempts will be rescued once their leases expire`,
    );
  });
  worker.attempts.stopHeartbeat();
  await step(rt, worker.maintenance.release(), (e) =>
    logger.warn("workpool: releasing maintenance leadership failed; it lapses by itself", e),
  );
}
