/**
 * What every noun of the driver contract uses: a fresh driver per test with its pool
 * seeded, new rows of that pool, claim options, and a new row with a distinct value in
 * every column of the work row's column list (so a column added to the list is checked
 * by every test that uses it, without changing the test).
 */
import { afterEach, expect } from "vitest";
import { DRIVER, type ClaimOptions, type Driver, type NewWork, type WorkFields } from "../../../src/driver/driver.js";
import { ROW_COLUMNS } from "../../../src/driver/work-columns.js";
import { newWorkId } from "../../../src/ids.js";
import type { HarnessStore, StoreHarness } from "../../conformance/harness.js";
import { T0 } from "../../helpers/common.js";
import { newWork } from "../../helpers/new-work.js";

export { T0 };
/** The pool every contract test seeds and writes to. */
export const POOL = "contract";

/** A new pending row of POOL, due at `runAt`. */
export function row(runAt = T0, overrides: Partial<NewWork> = {}): NewWork {
  return newWork(POOL, T0, { runAt, ...overrides });
}

/** Claim options of `workerId` for up to `limit` rows at `now`, with a lease of 1 s. */
export function claimBy(workerId: string, limit: number, now = T0): ClaimOptions {
  return { workerId, clock: () => now, leaseMs: 1000, limit };
}

/** A driver factory for the tests of one describe block: each call makes a fresh store, disposed after the test. */
export function useDriver<Tx>(harness: StoreHarness<Tx>): (maxParallelism?: number, keyParallelism?: number | null) => Promise<Driver<Tx>> {
  const live: HarnessStore<Tx>[] = [];
  afterEach(async () => {
    for (const h of live.splice(0)) await h.dispose();
  });
  return async (maxParallelism = 3, keyParallelism = null) => {
    const h = await harness.create();
    live.push(h);
    const d = h.store[DRIVER];
    await d.migrate();
    await d.ensurePool(POOL, { maxParallelism, logLevel: "REPORT", keyParallelism }, {});
    return d;
  };
}

/** Finishes running rows as succeeded, as a result write does. */
export function finish<Tx>(d: Driver<Tx>, ids: readonly string[], at = T0): Promise<void> {
  return d.transaction((ops) => ops.finish(ids.map((id) => ({ id, result: '{"kind":"success"}', finishedAt: at, ocState: "none" }))));
}

/**
 * A pending row of POOL, due at `runAt`, with a value of its own in every column of the
 * list (`seed` varies them): text columns name their field, numbers count from the seed.
 */
export function everyColumn(seed: number, runAt = T0 - 1): NewWork {
  const fields: Record<string, unknown> = {};
  for (const [i, c] of ROW_COLUMNS.entries()) {
    if (c.write === "json") fields[c.field] = { maxAttempts: 2 + seed, initialBackoffMs: 10 + i, base: 3 };
    else if (c.pgType === "text") fields[c.field] = `${c.field}-${seed}`;
    else fields[c.field] = c.pgType === "int" ? seed * 10 + i : T0 - 1000 * seed - i;
  }
  // The columns whose values the schema constrains, or the tests rely on.
  return newWork(POOL, T0, { ...(fields as Partial<WorkFields>), id: newWorkId(T0 + seed), pool: POOL, kind: "mutation", runAt });
}

/** Expects `row` to hold `work`'s value in every column of the list. */
export function expectEveryColumn(row: WorkFields | undefined, work: NewWork, what: string): void {
  expect(row, what).toBeDefined();
  for (const c of ROW_COLUMNS) expect(row![c.field as keyof WorkFields], `${what}: ${c.field}`).toEqual(work[c.field]);
}
