/**
 * Every admin call checks its input like the rest of the API: an InvalidArgumentError
 * naming the field, unknown option keys refused, and nothing read or changed.
 */
import { describe, expect, test } from "vitest";
import { workpoolAdmin, type WorkpoolAdmin } from "../../src/admin/index.js";
import { InvalidArgumentError } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { useTestContext } from "./context.js";

/** Expects `call` to reject (or throw) an InvalidArgumentError for `field`. */
async function refused(call: () => unknown, field: string): Promise<void> {
  let error: unknown;
  try {
    await call();
  } catch (e) {
    error = e;
  }
  expect(error, `expected an InvalidArgumentError for ${field}`).toBeInstanceOf(InvalidArgumentError);
  expect((error as InvalidArgumentError).field).toBe(field);
}

export function defineAdminValidationTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("admin: input", () => {
    const ctx = useTestContext(harness);

    test("every call refuses bad input with an InvalidArgumentError naming the field, and changes nothing", async () => {
      const t = await ctx();
      const pool = t.pool({ name: "p" });
      const ok = pool.defineAction("ok", () => 1);
      const ids = await pool.enqueueActionBatch(ok, [1, 2], { runAfter: 60_000 });
      const admin: WorkpoolAdmin = workpoolAdmin(t.h.store, { clock: t.clock });
      const any = admin as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;

      await refused(() => workpoolAdmin({}), "store");
      await refused(() => workpoolAdmin(null), "store");
      await refused(() => workpoolAdmin(t.h.store, { clok: t.clock } as never), "clok");
      await refused(() => workpoolAdmin(t.h.store, { clock: {} } as never), "clock");

      await refused(() => any.list!(42), "pool");
      await refused(() => any.list!("bad name!"), "pool");
      await refused(() => any.list!("p", "all"), "options");
      await refused(() => any.list!("p", { limit: 0 }), "limit");
      await refused(() => any.list!("p", { limit: 501 }), "limit");
      await refused(() => any.list!("p", { limit: 2.5 }), "limit");
      await refused(() => any.list!("p", { state: "done" }), "state");
      await refused(() => any.list!("p", { cursor: "page-2" }), "cursor");
      await refused(() => any.list!("p", { handler: "" }), "handler");
      await refused(() => any.list!("p", { search: "" }), "search");
      await refused(() => any.list!("p", { key: 7 }), "key");
      await refused(() => any.list!("p", { offset: 10 }), "offset");

      await refused(() => any.get!("nope"), "id");
      await refused(() => any.cancel!(5), "id");
      await refused(() => any.retry!(undefined), "id");

      await refused(() => any.cancelAll!("p", { before: Number.NaN }), "before");
      await refused(() => any.cancelAll!("p", { handler: 5 }), "handler");
      await refused(() => any.cancelAll!("p", { after: 1 }), "after");
      await refused(() => any.cancelAll!(""), "pool");

      await refused(() => any.purge!("p"), "options");
      await refused(() => any.purge!("p", {}), "state");
      await refused(() => any.purge!("p", { state: "running" }), "state");
      await refused(() => any.purge!("p", { state: "finished", before: "7d" }), "before");
      await refused(() => any.purge!("p", { state: "finished", olderThan: 1 }), "olderThan");

      await refused(() => any.pause!(undefined), "pool");
      await refused(() => any.resume!({}), "pool");
      await refused(() => any.setParallelism!("p", -1), "n");
      await refused(() => any.setParallelism!("p", 10_001), "n");
      await refused(() => any.setParallelism!("p", 1.5), "n");
      await refused(() => any.setParallelism!("p", "4"), "n");
      await refused(() => admin.observe({} as never), "pool");

      // Nothing was canceled, deleted or reconfigured.
      for (const id of ids) expect((await admin.get(id))!.state).toBe("pending");
      expect(await harness.countWorkRows(t.h)).toBe(2);
      expect((await admin.pools()).map((p) => [p.name, p.maxParallelism, p.counts.pending])).toEqual([["p", 10, 2]]);
    });
  });
}
