/**
 * The pool runtime the admin's writes run under: the same transitions as a pool's, with
 * no handlers loaded. Work it finishes (a cancel) keeps its onComplete pending, due at
 * once, and the pool's maintenance leader, a process that has the handler, delivers it
 * exactly once (see transitions/on-complete.ts).
 */
import { hostname } from "node:os";
import type { Clock } from "../clock.js";
import type { Driver } from "../driver/driver.js";
import { EventHub, PoolLogger } from "../events.js";
import { HandlerRegistry } from "../handlers.js";
import type { PoolRuntime } from "../internal/runtime.js";
import { Tracing } from "../internal/tracing.js";
import { resolveOptions } from "../options.js";

/** The admin's runtime for `pool`: default options, the given clock, warnings and errors to the console. */
export function adminRuntime<Tx>(driver: Driver<Tx>, pool: string, clock: Clock): PoolRuntime<Tx> {
  const options = resolveOptions({ name: pool, clock, logLevel: "WARN" });
  const logger = new PoolLogger(options.logger, options.logLevel, pool);
  return {
    pool,
    driver,
    options,
    logger,
    events: new EventHub(logger),
    handlers: new HandlerRegistry<Tx>(pool),
    tracing: new Tracing(null),
    workerId: `admin:${hostname()}:${process.pid}`,
    defersOnComplete: true,
  };
}
