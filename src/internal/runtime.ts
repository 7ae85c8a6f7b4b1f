/**
 * The shared context of one pool instance, handed to every internal part.
 */
import type { Driver } from "../driver/driver.js";
import type { EventHub, PoolLogger } from "../events.js";
import type { HandlerRegistry } from "../handlers.js";
import type { ResolvedOptions } from "../options.js";
import type { Tracing } from "./tracing.js";

/** Everything internal parts of a pool share. */
export interface PoolRuntime<Tx> {
  readonly pool: string;
  readonly driver: Driver<Tx>;
  readonly options: ResolvedOptions;
  readonly logger: PoolLogger;
  readonly events: EventHub;
  readonly handlers: HandlerRegistry<Tx>;
  /** The pool's telemetry, guarded. */
  readonly tracing: Tracing;
  /** Unique id of this pool instance's worker (host, pid and random part). */
  readonly workerId: string;
  /**
   * True for a runtime that has no handlers (the admin API's): work it finishes keeps its
   * onComplete pending, due at once, and a worker of the pool delivers it.
   */
  readonly defersOnComplete?: boolean;
}

/** Key of a Workpool's runtime, for the layers built on a pool (workflows). */
export const POOL_RUNTIME = Symbol.for("workpool.runtime");

/** What a layer built on a pool reaches through {@link POOL_RUNTIME}. */
export interface PoolInternals<Tx> {
  rt: PoolRuntime<Tx>;
  /** Resolves once the pool's schema and configuration are in the store. */
  ready(): Promise<void>;
}
