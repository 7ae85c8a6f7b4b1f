// Keyed drains with several workers on PostgreSQL, counting the deadlocks the server
// reports and drains that stop short. Six stores (six connection pools) drain 800 jobs
// over 4 keys at keyParallelism 4, each handler taking 0–3 ms. Results:
// notes/priorities-keys.md.
//
//   node bench/keyed-deadlock-probe.mjs --dist=<dist folder> [--rounds=6]
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import { PG_URL } from "./lib/env.mjs";

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const dist = pathToFileURL(resolve(arg("dist", "dist"))).href;
const rounds = Number(arg("rounds", "6"));
const { Workpool } = await import(`${dist}/index.js`);
const { postgresStore } = await import(`${dist}/drivers/postgres/index.js`);
const schema = "keyed_probe";
const admin = new pg.Client({ connectionString: PG_URL });
await admin.connect();
let deadlocks = 0;
let stalls = 0;
const logger = {
  debug() {},
  info() {},
  warn() {},
  error(fields) {
    if (/deadlock detected/.test(String(fields?.err))) deadlocks++;
  },
};
for (let round = 0; round < rounds; round++) {
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  const stores = Array.from({ length: 6 }, () => postgresStore({ connectionString: PG_URL, schema }));
  const pools = stores.map((s) => new Workpool(s, { name: "k", maxParallelism: 24, keyParallelism: 4, logger, pollIntervalMs: 50 }));
  let done = 0;
  const handles = pools.map((p) => {
    p.on("completed", () => done++);
    return p.defineAction("job", () => new Promise((r) => setTimeout(r, Math.random() * 3)));
  });
  const n = 800;
  for (let i = 0; i < 4; i++)
    await pools[0].enqueueActionBatch(
      handles[0],
      Array.from({ length: n / 4 }, () => ({})),
      { key: `k${i}` },
    );
  await Promise.all(pools.map((p) => p.start()));
  let last = -1;
  let still = 0;
  while (done < n && still < 6) {
    await new Promise((r) => setTimeout(r, 500));
    still = done === last ? still + 1 : 0;
    last = done;
  }
  if (done < n) stalls++;
  await Promise.all(pools.map((p) => p.stop({ timeoutMs: 1000 })));
  await Promise.all(stores.map((s) => s.close()));
}
await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
await admin.end();
console.log(JSON.stringify({ rounds, deadlocks, stalls }));
