// Cron schedules and rate limits: a report per tenant every second (a nightly report,
// sped up), and calls to a partner API limited to 2 per second per token.
// Run it with `npm run example:schedules` (after `npm install`); it uses SQLite in
// `schedules-example.db` (recreated on every run) and needs no server.
import { rmSync } from "node:fs";
import { Workpool } from "workpool";
import { sqliteStore } from "workpool/sqlite";

const DB_FILE = "schedules-example.db";
for (const suffix of ["", "-wal", "-shm"]) rmSync(DB_FILE + suffix, { force: true });

const store = sqliteStore({ filename: DB_FILE });
const pool = new Workpool(store, { name: "reports", keyRateLimit: { limit: 2, periodMs: 1000 }, logLevel: "WARN" });
const started = Date.now();
const since = () => `${((Date.now() - started) / 1000).toFixed(1)}s`.padStart(5);

const report = pool.defineAction("tenantReport", async (ctx, /** @type {{ tenant: string }} */ args) => {
  console.log(`${since()}  report for ${args.tenant} (work ${ctx.workId})`);
  // Each report calls the partner API three times with the tenant's token: at most 2 per second start.
  for (const page of [1, 2, 3]) await pool.enqueueAction(callPartner, { tenant: args.tenant, page }, { key: `token:${args.tenant}` });
});

const callPartner = pool.defineAction("callPartner", async (_ctx, /** @type {{ tenant: string; page: number }} */ args) => {
  console.log(`${since()}    partner API call for ${args.tenant}, page ${args.page}`);
});

// In production: { cron: "0 2 * * *", timezone: "Europe/Berlin" }, nightly at 02:00 Berlin time.
for (const tenant of ["acme", "globex"]) {
  await pool.schedule(`report:${tenant}`, { cron: "*/2 * * * * *" }, report, { tenant }, { key: `report:${tenant}` });
}
await pool.start();
await new Promise((resolve) => setTimeout(resolve, 4500));
await pool.stop();

for (const s of await pool.schedules()) {
  console.log(
    `${s.id}: ${s.spec.cron} (${s.spec.timezone}), last tick ${new Date(s.lastTick ?? 0).toISOString()}, next ${new Date(s.nextRunAt ?? 0).toISOString()}`,
  );
}
await store.close();
