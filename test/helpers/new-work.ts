/**
 * A new work row as the driver interface takes it, for tests that call a driver
 * directly: a plain action of `pool`, due at `at`, with nothing optional set.
 */
import type { NewWork } from "../../src/driver/driver.js";
import { newWorkId } from "../../src/ids.js";

/** A pending action row of `pool` made at `at` (id, runAt and enqueuedAt), with `overrides` applied. */
export function newWork(pool: string, at: number, overrides: Partial<NewWork> = {}): NewWork {
  return {
    id: newWorkId(at),
    pool,
    kind: "action",
    fnName: "job",
    name: null,
    args: "{}",
    runAt: at,
    enqueuedAt: at,
    retry: null,
    timeoutMs: null,
    onComplete: null,
    context: null,
    priority: 0,
    key: null,
    meta: null,
    uniqueKey: null,
    onConflict: "keep",
    ...overrides,
  };
}
