/**
 * Duties every instance of a pool does on its maintenance timer, leader or not (and in
 * runOnce()): a layer built on the pool (the workflow layer's version heartbeat) registers
 * one here. Each duty's failure is logged, never thrown: maintenance goes on.
 */
import type { PoolRuntime } from "./runtime.js";

/** One duty of every instance. */
export interface InstanceDuty {
  /** Runs at each maintenance tick of the instance. */
  tick(now: number): Promise<void>;
  /** Runs once when the instance's worker stops. */
  stop(): Promise<void>;
}

const registered = new WeakMap<object, Set<InstanceDuty>>();

/** The duties registered on a pool instance (by its runtime). */
export function instanceDuties<Tx>(rt: PoolRuntime<Tx>): Set<InstanceDuty> {
  let duties = registered.get(rt);
  if (!duties) registered.set(rt, (duties = new Set()));
  return duties;
}

/** Ticks every duty of the instance. */
export async function tickInstanceDuties<Tx>(rt: PoolRuntime<Tx>, now: number): Promise<void> {
  for (const duty of registered.get(rt) ?? []) {
    try {
      await duty.tick(now);
    } catch (e) {
      rt.logger.warn(`workpool: a maintenance duty of pool "${rt.pool}" failed; it runs again next tick`, e);
    }
  }
}

/** Stops every duty of the instance. */
export async function stopInstanceDuties<Tx>(rt: PoolRuntime<Tx>): Promise<void> {
  for (const duty of registered.get(rt) ?? []) {
    try {
      await duty.stop();
    } catch (e) {
      rt.logger.warn(`workpool: stopping a maintenance duty of pool "${rt.pool}" failed`, e);
    }
  }
}
