/**
 * Guarantee 10 across processes: three worker processes share one store; the handlers
 * record their own starts and ends (test/fixtures/keys-child.mjs), and replaying those
 * records in the order the database took them shows at most keyParallelism attempts of a
 * key, and at most maxParallelism in all, running at any instant.
 */
import { afterEach, describe, expect, test } from "vitest";
import { systemClock } from "../../src/index.js";
import { spawnChild, type Child } from "../helpers/child.js";
import type { StoreHarness } from "./harness.js";
import { useTestContext } from "./context.js";

const KEYS = ["a", "b", "c", "d"];
const PER_KEY = 12;

/** The most attempts running at once, overall and per key, replaying start/end records in order. */
function peaks(events: { key: string; kind: string }[]): { overall: number; perKey: Map<string, number> } {
  let live = 0;
  let overall = 0;
  const liveKey = new Map<string, number>();
  const perKey = new Map<string, number>();
  for (const e of events) {
    const delta = e.kind === "start" ? 1 : -1;
    live += delta;
    const n = (liveKey.get(e.key) ?? 0) + delta;
    liveKey.set(e.key, n);
    overall = Math.max(overall, live);
    perKey.set(e.key, Math.max(perKey.get(e.key) ?? 0, n));
  }
  return { overall, perKey };
}

export function defineKeyProcessTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("per-key parallelism across processes", () => {
    const ctx = useTestContext(harness);
    const children: Child[] = [];
    afterEach(() => {
      for (const c of children.splice(0)) c.proc.kill("SIGKILL");
    });

    test("three processes never run more than keyParallelism of a key, nor maxParallelism in all", async () => {
      const t = await ctx();
      await harness.query(t.h, harness.keyEventsTableSql);
      // Paused until every child is ready, so no child can take all the work alone. On the
      // children's clock: the system's.
      const admin = t.pool({ name: "keys", maxParallelism: 0, clock: systemClock });
      const job = admin.defineAction("keyed", () => undefined);
      for (const key of KEYS) {
        await admin.enqueueActionBatch(
          job,
          Array.from({ length: PER_KEY }, (_, i) => ({ key, i })),
          { key, priority: KEYS.indexOf(key) % 2 },
        );
      }
      await admin.runOnce();
      children.push(...[0, 1, 2].map(() => spawnChild("keys-child.mjs", harness.childArgs(t.h))));
      await Promise.all(children.map((c) => c.waitForLine(/^ready$/)));
      await admin.configure({ maxParallelism: 5, keyParallelism: 2 });
      const codes = await Promise.all(children.map((c) => c.exited));
      expect(codes, children.map((c) => c.stderr()).join("\n")).toEqual([0, 0, 0]);

      const events = (await harness.query(t.h, "SELECT key, kind, pid FROM key_events ORDER BY seq")) as {
        key: string;
        kind: string;
        pid: number;
      }[];
      expect(events.filter((e) => e.kind === "start")).toHaveLength(KEYS.length * PER_KEY);
      expect(events.filter((e) => e.kind === "end")).toHaveLength(KEYS.length * PER_KEY);
      const { overall, perKey } = peaks(events);
      for (const key of KEYS) expect(perKey.get(key), `key ${key}`).toBeLessThanOrEqual(2);
      expect(overall).toBeLessThanOrEqual(5);
      // The limits were reached, by more than one process.
      expect(Math.max(...perKey.values())).toBe(2);
      expect(overall).toBeGreaterThanOrEqual(3);
      expect(new Set(events.map((e) => e.pid)).size).toBeGreaterThanOrEqual(2);
      expect((await t.driver.counts("keys", t.clock.now())).pending).toBe(0);
    });
  });
}
