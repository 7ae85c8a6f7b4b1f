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
 * Connections the PostgreSQL reference takes turns on, one per segment (see
 * openCommitter); the enqueue-one workload's 10 segments give each two.
 */
const PG_REFERENCE_CONNECTIONS = 5;

/**
 * Opens a single-row autocommit writer for `kind`: `{ commit(i), connections?, next?(),
 * close() }`. Its table (or file, or keys) is private to this process and removed by
 * close(). A writer with several `connections` has `next()`, which moves the following
 * commits to its next connection; commitFor() calls it before each segment.
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
    // Several connections, one per segment in turn (see next()): each connection's
    // server process runs at its own pace (identical ones, alternated in one process,
    // differed by up to 13 %), so a single one would tilt every ratio taken against it.
    const clients = [];
    const table = `bench_commit_rate_${tag}`;
    const query = { name: `commit_rate_${tag}`, text: `INSERT INTO ${table} (v) VALUES ($1)`, values: ["x"] };
    try {
      for (let k = 0; k < PG_REFERENCE_CONNECTIONS; k++) {
        const c = new pg.Client({ connectionString: PG_URL });
        clients.push(c);
        await c.connect();
      }
      await clients[0].query(`DROP TABLE IF EXISTS ${table}`);
      await clients[0].query(`CREATE TABLE ${table} (id BIGSERIAL PRIMARY KEY, v TEXT NOT NULL)`);
      // Prepares the statement and warms each connection's server process.
      for (const c of clients) for (let w = 0; w < 20; w++) await c.query(query);
    } catch (e) {
      await Promise.allSettled(clients.map((c) => c.end()));
      throw e;
    }
    let current = 0;
    return {
      connections: clients.length,
      commit: () => clients[current].query(query),
      next: () => {
        current = (current + 1) % clients.length;
      },
      close: async () => {
        try {
          await clients[0].query(`DROP TABLE ${table}`);
        } finally {
          await Promise.allSettled(clients.map((c) => c.end()));
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

/**
 * Commits one after another for `ms` milliseconds, on the committer's next connection
 * where it has several; returns { n, seconds }.
 */
export async function commitFor(committer, ms) {
  committer.next?.();
  const t0 = performance.now();
  const until = t0 + ms;
  let n = 0;
  while (performance.now() < until) {
    await committer.commit(n);
    n++;
  }
  return { n, seconds: (performance.now() - t0) / 1000 };
}

/**
 * The commit rate of `kind` over `seconds`, on its own (commits/s): one segment per
 * connection of the committer, so each gets an equal share of the time.
 */
export async function commitRate(kind, dir, seconds) {
  const committer = await openCommitter(kind, dir);
  try {
    for (let i = 0; i < 20; i++) await committer.commit(-1); // warm up: connection, prepared statement
    let n = 0;
    let s = 0;
    const segments = committer.connections ?? 1;
    for (let k = 0; k < segments; k++) {
      const r = await commitFor(committer, (seconds * 1000) / segments);
      n += r.n;
      s += r.seconds;
    }
    return n / s;
  } finally {
    await committer.close();
  }
}
