// The physical reference: how many single-row INSERT transactions per second each store
// commits on this machine, one after another from one client. A queue that commits once
// per enqueued job cannot enqueue one at a time faster than this.
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { withClient } from "./pg.mjs";
import { REDIS_URL } from "./env.mjs";

async function loopFor(seconds, fn) {
  const until = performance.now() + seconds * 1000;
  const t0 = performance.now();
  let n = 0;
  while (performance.now() < until) {
    await fn(n);
    n++;
  }
  return n / ((performance.now() - t0) / 1000);
}

/** SQLite file in WAL mode with the given synchronous setting (the pragmas workpool uses). */
export async function sqliteCommitRate(dir, synchronous, seconds) {
  const { default: Database } = await import("better-sqlite3");
  const file = join(dir, `commit-rate-${synchronous}.db`);
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${synchronous}`);
  db.exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
  const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
  const rate = await loopFor(seconds, () => insert.run("x")); // autocommit: one transaction each
  db.close();
  return rate;
}

/** PostgreSQL: autocommit single-row INSERTs over one connection. */
export async function postgresCommitRate(seconds) {
  return withClient(async (c) => {
    await c.query("DROP TABLE IF EXISTS bench_commit_rate");
    await c.query("CREATE TABLE bench_commit_rate (id BIGSERIAL PRIMARY KEY, v TEXT NOT NULL)");
    try {
      return await loopFor(seconds, () => c.query({ name: "ins", text: "INSERT INTO bench_commit_rate (v) VALUES ($1)", values: ["x"] }));
    } finally {
      await c.query("DROP TABLE bench_commit_rate");
    }
  });
}

/** Redis: one SET round trip at a time on the bench's database (acknowledged from memory). */
export async function redisWriteRate(seconds) {
  const { Redis } = await import("ioredis");
  const url = new URL(REDIS_URL);
  const r = new Redis({ host: url.hostname, port: Number(url.port || 6379), db: Number(url.pathname.slice(1) || 0) });
  try {
    return await loopFor(seconds, (i) => r.set(`bench:commit-rate:${i % 1000}`, "x"));
  } finally {
    await r.flushdb();
    await r.quit();
  }
}
