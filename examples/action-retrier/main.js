// ActionRetrier example: "run this idempotent action until it succeeds".
// Run it with `npm run example:retrier` (after `npm install`); it uses SQLite in
// `retrier-example.db` (recreated on every run) and needs no server.
//
// A fake exchange-rate API fails the first two calls for each currency, then answers.
// Each run is retried with backoff until it succeeds; an unknown currency throws
// NonRetryableError and fails at once. onComplete records every outcome in the app's own
// table, exactly once, in the transaction that completes the run.
import { rmSync } from "node:fs";
import { ActionRetrier, NonRetryableError } from "workpool";
import { sqliteStore } from "workpool/sqlite";

const DB_FILE = "retrier-example.db";
for (const suffix of ["", "-wal", "-shm"]) rmSync(DB_FILE + suffix, { force: true });

const store = sqliteStore({ filename: DB_FILE });
store.db.exec("CREATE TABLE rates (run_id TEXT PRIMARY KEY, currency TEXT, outcome TEXT, rate REAL, error TEXT)");

/** Calls so far per currency: the fake API fails the first two. */
const calls = new Map();
const RATES = { EUR: 0.92, GBP: 0.79, JPY: 151.2 };

const retrier = new ActionRetrier(store, { initialBackoffMs: 20, base: 2, maxFailures: 4, logLevel: "WARN" });

const fetchRate = retrier.defineAction("fetchRate", async (ctx, /** @type {{ currency: string }} */ args) => {
  const n = (calls.get(args.currency) ?? 0) + 1;
  calls.set(args.currency, n);
  await new Promise((resolve) => setTimeout(resolve, 5));
  if (!(args.currency in RATES)) throw new NonRetryableError(`unknown currency ${args.currency}`);
  if (n <= 2) throw new Error(`rate service busy (call ${n})`);
  return { currency: args.currency, rate: RATES[/** @type {keyof typeof RATES} */ (args.currency)], attempt: ctx.attempt };
});

// The run's context (its currency) comes back to onComplete with the result.
const record = retrier.defineOnComplete("recordRate", (ctx, { runId, context, result }) => {
  const rate = result.type === "success" ? /** @type {{ rate: number }} */ (result.returnValue).rate : null;
  const error = result.type === "failed" ? result.error : null;
  ctx.tx
    .prepare("INSERT INTO rates (run_id, currency, outcome, rate, error) VALUES (?, ?, ?, ?, ?)")
    .run(runId, context.currency, result.type, rate, error);
});

await retrier.start();
const done = new Promise((resolve) => {
  let completed = 0;
  retrier.on("completed", (e) => {
    if (e.status !== "retrying" && ++completed === 4) resolve(undefined);
  });
});
const runs = [];
for (const currency of ["EUR", "GBP", "JPY", "XYZ"]) {
  runs.push([currency, await retrier.run(fetchRate, { currency }, { onComplete: record, context: { currency } })]);
}
await done;
await retrier.stop();

const rows = store.db.prepare("SELECT currency, outcome, rate, error FROM rates ORDER BY currency").all();
console.table(rows);
for (const [currency, runId] of runs) console.log(currency.padEnd(4), JSON.stringify(await retrier.status(runId)));
await store.close();
if (rows.length !== 4) {
  console.error(`expected 4 outcome rows, found ${rows.length}`);
  process.exit(1);
}
