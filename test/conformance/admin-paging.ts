/**
 * The admin API's listing is keyset-paginated (by id, newest first, no OFFSET): pages stay
 * exact while work is being enqueued, and a page holds at most 500 items.
 */
import { describe, expect, test } from "vitest";
import { workpoolAdmin } from "../../src/admin/index.js";
import type { NewWork } from "../../src/driver/driver.js";
import type { StoreHarness } from "./harness.js";
import { T0, useTestContext } from "./context.js";
import { newWork } from "../helpers/new-work.js";

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/** The id prefix of the rows below: one millisecond, so only the 16 characters after it differ. */
const PREFIX = "01JZZZZZZZ";

/** The work id with `n` in its last 16 characters (base 32). */
function idOf(n: number): string {
  let tail = "";
  for (let i = 0, v = n; i < 16; i++, v = Math.floor(v / 32)) tail = ALPHABET[v % 32] + tail;
  return PREFIX + tail;
}

function numberOf(id: string): number {
  let n = 0;
  for (const c of id.slice(PREFIX.length)) n = n * 32 + ALPHABET.indexOf(c);
  return n;
}

const WORK: NewWork = newWork("p", T0, { id: "", fnName: "ok", args: "1" });

export function defineAdminPagingTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("admin: paging", () => {
    const ctx = useTestContext(harness);

    test("pages stay exact under concurrent inserts: no item twice, none skipped", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      await t.pool({ name: "p" }).runOnce();
      // Ids chosen so that each page's inserts land just behind the cursor (they must be
      // listed later, once) and just ahead of it (already passed: never listed).
      const row = (n: number): NewWork => ({ ...WORK, id: idOf(n) });
      const before = Array.from({ length: 150 }, (_, i) => (i + 1) * 1000);
      await t.driver.insertWork(before.map(row));
      const used = new Set(before);
      const behind: number[] = [];
      const ahead: number[] = [];
      const seen: string[] = [];
      let cursor: string | undefined;
      for (;;) {
        const at = cursor === undefined ? 0 : numberOf(cursor);
        const fresh = (n: number): number[] => (cursor === undefined || used.has(n) ? [] : (used.add(n), [n]));
        // Behind the cursor, committed before the page is read: it must be listed, once.
        const back = fresh(at - 1);
        await t.driver.insertWork(back.map(row));
        behind.push(...back);
        // Ahead of the cursor, written while the page is read: already passed, never listed.
        const front = fresh(at + 1);
        ahead.push(...front);
        const [page] = await Promise.all([
          admin.list("p", { limit: 7, ...(cursor ? { cursor } : {}) }),
          t.driver.insertWork(front.map(row)),
        ]);
        seen.push(...page.items.map((i) => i.id));
        if (page.cursor === null) break;
        expect(page.items).toHaveLength(7);
        cursor = page.cursor;
      }
      expect(new Set(seen).size).toBe(seen.length);
      expect([...seen].sort().reverse()).toEqual(seen);
      const expected = [...before, ...behind].map(idOf);
      expect([...seen].sort()).toEqual(expected.sort());
      expect(ahead.length).toBeGreaterThan(20);
      expect(behind.length).toBeGreaterThan(20);
    });

    test("every state filter lists the same work, in the same order, whether few or many rows match", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      await t.pool({ name: "p" }).runOnce();
      // 2,400 rows: more than a store may sort for one page (1,000 on SQLite), in every state.
      const ns = Array.from({ length: 2400 }, (_, i) => i + 1);
      await t.driver.insertWork(ns.map((n) => ({ ...WORK, id: idOf(n) })));
      const kinds = ["success", "failed", "canceled"] as const;
      const finished = ns.filter((n) => n % 2 === 0);
      await t.driver.transaction((ops) =>
        ops.finish(finished.map((n) => ({ id: idOf(n), result: JSON.stringify({ kind: kinds[n % 3] }), finishedAt: T0, ocState: "none" }))),
      );
      const expected: Record<string, number[]> = {
        pending: ns.filter((n) => n % 2 === 1),
        finished,
        success: finished.filter((n) => n % 3 === 0),
        failed: finished.filter((n) => n % 3 === 1),
        canceled: finished.filter((n) => n % 3 === 2),
      };
      for (const [state, want] of Object.entries(expected)) {
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const page = await admin.list("p", { state: state as "pending", limit: 500, ...(cursor ? { cursor } : {}) });
          seen.push(...page.items.map((i) => i.id));
          cursor = page.cursor;
        } while (cursor);
        expect(seen, state).toEqual(want.map(idOf).reverse());
      }
    });

    test("a page holds at most 500 items; the last page has no cursor", async () => {
      const t = await ctx();
      const admin = workpoolAdmin(t.h.store, { clock: t.clock });
      const pool = t.pool({ name: "p" });
      const ok = pool.defineAction("ok", () => 1);
      const ids = await pool.enqueueActionBatch(
        ok,
        Array.from({ length: 501 }, () => null),
      );
      const first = await admin.list("p", { limit: 500 });
      expect(first.items).toHaveLength(500);
      expect(first.cursor).toBe(first.items[499]!.id);
      const second = await admin.list("p", { limit: 500, cursor: first.cursor! });
      expect(second).toEqual({ items: [expect.objectContaining({ id: [...ids].sort()[0] })], cursor: null });
      expect((await admin.list("p")).items).toHaveLength(50);
      const exact = await admin.list("p", { limit: 501 - 50, cursor: (await admin.list("p")).cursor! });
      expect(exact.cursor).toBeNull();
    });
  });
}
