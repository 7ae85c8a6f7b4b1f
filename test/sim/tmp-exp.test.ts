import { it } from "vitest";
import { runBatch } from "./batch.js";
import { VARIANTS } from "./variants.js";
import type { Driver } from "../../src/driver/driver.js";

it("key only", async () => {
  const base = VARIANTS.find((v) => v.name === "claim-over-rate-limit")!;
  const variant = {
    ...base,
    wrap<Tx>(d: Driver<Tx>): Driver<Tx> {
      return new Proxy(d, {
        get(t, p) {
          if (p === "claim")
            return async (pool: string, opts: never) => {
              const rates = await t.readRateLimits(pool);
              if (!rates.keyRateLimit) return t.claim(pool, opts);
              await t.setRateLimits(pool, { keyRateLimit: { ...rates.keyRateLimit, limit: rates.keyRateLimit.limit + 1 } });
              try {
                return await t.claim(pool, opts);
              } finally {
                await t.setRateLimits(pool, rates);
              }
            };
          const v = Reflect.get(t, p, t);
          return typeof v === "function" ? v.bind(t) : v;
        },
      });
    },
  };
  const r = await runBatch({ store: "sqlite", firstSeed: 1, seeds: 400, variant });
  console.log("KEY", r.failures[0]?.seed, r.failures[0]?.message);
}, 300_000);
