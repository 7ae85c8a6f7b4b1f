// Drain a backlog spread over 1,000 keys with at most one running job per key
// (keyParallelism 1: a serial queue per key) and mixed priorities, at concurrency 100.
// Only for systems that offer per-key concurrency and priorities without extra software
// (see `keyed` in systems/index.mjs); the others sit it out.
import { FILL_BATCH_SIZE } from "../lib/env.mjs";
import { drainLife, lifeMetrics, lifeValues } from "../lib/life-cost.mjs";

const KEYS = 1000;
const CONCURRENCY = 100;

export default {
  id: "drain-keys",
  perRep: true,
  metrics: [
    {
      key: "drainKeys",
      short: "drain, 1,000 keys at 1 each",
      label: (m) =>
        `drain ${m.drain.toLocaleString("en-US")} queued over ${KEYS.toLocaleString("en-US")} keys, one running per key, priorities -5/0/5, concurrency ${CONCURRENCY}`,
      unit: "jobs/s",
      better: "higher",
    },
    ...lifeMetrics("drainKeys", "keyed drain"),
  ],
  async measure({ system, mode, ctx, child }) {
    await system.reset(ctx);
    const { r, cost } = await drainLife({
      system,
      child,
      fill: () => child("enqueueKeyed", { n: mode.drain, keys: KEYS, batch: FILL_BATCH_SIZE }),
      drain: () => child("drain", { n: mode.drain, concurrency: CONCURRENCY, keyParallelism: 1, capS: mode.drainCapS }),
    });
    const life = lifeValues("drainKeys", cost);
    if (life.line) process.stderr.write(`    ${system.label} ${this.id}: ${life.line}\n`);
    return {
      values: { drainKeys: r.rate, ...life.values },
      capped: r.capped
        ? { drainKeys: `${r.completed.toLocaleString("en-US")} of ${r.n.toLocaleString("en-US")} in ${mode.drainCapS} s` }
        : {},
      detail: { seconds: r.seconds, completed: r.completed, serverCost: cost },
    };
  },
};
