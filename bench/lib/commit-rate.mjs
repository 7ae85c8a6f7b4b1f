// The physical reference: how many single-row INSERT transactions per second each store
// commits on this machine, one after another from one client. A queue that commits once
// per enqueued job cannot enqueue one at a time faster than this.
//
// openCommitter() gives one such writer; commitRate() runs it for a while on its own (the
// run's reference table), and the enqueue-one workload runs it in the same child process
// as the system it measures, alternating with that system's enqueues, so both numbers
// see the same machine at the same moments.
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { PG_URL, REDIS_URL } from "./env.mjs";

/** Reference kinds: the store each system commits to, with its durability setting. */
export const COMMIT_REFERENCES = ["sqliteFull", "sqliteNormal", "postgres", "redis"];

/**
 * Opens a single-row autocommit writer for `kind`: `{ commit(i), close() }`. Its table
 * (or file, or keys) is private to this process and removed by close().
 */
export async function openCommitter(kind, dir) {
  const tag = `${process.pid}`;
  if (kind === "sqliteFull" || kind === "sqliteNormal") {
    const { default: Database } = await import("better-sqlite3");
    const { rmSync } = await import("node:fs");
    const file = join(dir, `commit-rate-${kind}-${tag}.db`);
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${kind === "sqliteFull" ? "FULL" : "NORMAL"}`);
    db.exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
    return {
      commit: async () => insert.run("x"), // autocommit: one transaction each
      close: async () => {
        db.close();
        for (const ext of ["", "-wal", "-shm"]) rmSync(file + ext, { force: true });
      },
    };
  }
  if (kind === "postgres") {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    const table = `bench_commit_rate_${tag}`;
    await c.query(`DROP TABLE IF EXISTS ${table}`);
    await c.query(`CREATE TABLE ${table} (id BIGSERIAL PRIMARY KEY, v TEXT NOT NULL)`);
    const query = { name: `commit_rate_${tag}`, text: `INSERT INTO ${table} (v) VALUES ($1)`, values: ["x"] };
    return {
      commit: () => c.query(query),
      close: async () => {
        try {
          await c.query(`DROP TABLE ${table}`);
        } finally {
          await c.end();
        }
      },
    };
  }
  if (kind === "redis") {
    // One SET round trip at a time (acknowledged from memory).
    const { Redis } = await import("ioredis");
    const url = new URL(REDIS_URL);
    const r = new Redis({ host: url.hostname, port: Number(url.port || 6379), db: Number(url.pathname.slice(1) || 0) });
    const prefix = `bench:commit-rate:${tag}:`;
    return {
      commit: (i) => r.set(`${prefix}${i % 1000}`, "x"),
      close: async () => {
        const keys = await r.keys(`${prefix}*`);
        if (keys.length) await r.del(...keys);
        await r.quit();
      },
    };
  }
  throw new Error(`unknown commit reference ${kind}; known: ${COMMIT_REFERENCES.join(", ")}`);
}

/** Commits one after another for `ms` milliseconds; returns { n, seconds }. */
export async function commitFor(committer, ms) {
  const t0 = performance.now();
  const until = t0 + ms;
  let n = 0;
  while (performance.now() < until) {
    await committer.commit(n);
    n++;
  }
  return { n, seconds: (performance.now() - t0) / 1000 };
}

/** The commit rate of `kind` over `seconds`, on its own (commits/s). */
export async function commitRate(kind, dir, seconds) {
  const committer = await openCommitter(kind, dir);
  try {
    for (let i = 0; i < 20; i++) await committer.commit(-1); // warm up: connection, prepared statement
    const { n, seconds: s } = await commitFor(committer, seconds * 1000);
    return n / s;
  } finally {
    await committer.close();
  }
}
