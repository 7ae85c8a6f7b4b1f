/**
 * A new work row as the driver interface takes it, for tests that call a driver
 * directly: a plain action of `pool`, due at `at`, with nothing optional set.
 */
import type { NewWork } from "../../src/driver/driver.js";
import { newWork as buildNewWork } from "../../src/driver/work-columns.js";
import { newWorkId } from "../../src/ids.js";

/** A pending action row of `pool` made at `at` (id, runAt and enqueuedAt), with `overrides` applied. */
export function newWork(pool: string, at: number, overrides: Partial<NewWork> = {}): NewWork {
  return buildNewWork({ id: newWorkId(at), pool, kind: "action", fnName: "job", args: "{}", runAt: at, enqueuedAt: at, ...overrides });
}
