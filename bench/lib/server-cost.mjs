// What a step costs the PostgreSQL server: the CPU of its processes and the WAL it
// writes. The bench runs on the server's machine, so the CPU comes from /proc:
//
// - server: every PostgreSQL process, as the kernel counts it: utime+stime of the live
//   children of the postmaster, plus the postmaster's own and its cutime+cstime (where the
//   CPU of a backend that exited ends up). Exact, but it counts every database.
// - db: the backends of the bench's database alone. Other work on the same server (tests,
//   another bench) would otherwise show up in the figures, so the children are sampled
//   every few ms and each one's CPU is counted by its process title's database. The CPU a
//   backend spent between its last sample and its exit is found in the postmaster's
//   cutime and given to the processes that exited in that interval.
// - background: the checkpointer, background writer, WAL writer, autovacuum and the
//   postmaster itself, which serve every database.
//
// WAL: `pg_current_wal_insert_lsn()` before and after (the whole server), and, when
// pg_waldump can read the server's pg_wal, the bytes of the records of the bench's
// database (by the relation each record touches, and for a commit by its transaction),
// scaled to the LSN distance so both count page headers and padding alike.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { createInterface } from "node:readline";
import pg from "pg";
import { PG_URL } from "./env.mjs";

/** Kernel ticks per second of utime/stime (USER_HZ); 100 on Linux unless getconf says otherwise. */
function clockTicks() {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
}

/** Fields of /proc/<pid>/stat after the command name, or null if the process is gone. */
function statFields(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    return s.slice(s.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** utime+stime, cutime+cstime and start time (ticks) from statFields. */
const cpuOf = (f) => ({ own: Number(f[11]) + Number(f[12]), children: Number(f[13]) + Number(f[14]), start: f[19] });

function childrenOf(pid) {
  const direct = `/proc/${pid}/task/${pid}/children`;
  if (existsSync(direct)) return readFileSync(direct, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  const out = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    const f = statFields(d);
    if (f && Number(f[1]) === pid) out.push(Number(d));
  }
  return out;
}

/**
 * Process title → "db" (a backend or autovacuum worker of `dbName`), "other" (another
 * database's), "background", or null while the title is not set yet (a backend just
 * forked still shows the postmaster's command line until it has authenticated).
 */
function classify(pid, dbName, cluster) {
  let title;
  try {
    title = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim();
  } catch {
    return null;
  }
  if (!title.startsWith("postgres: ")) return null;
  title = title.slice("postgres: ".length);
  if (cluster && title.startsWith(`${cluster}: `)) title = title.slice(cluster.length + 2);
  const av = /^autovacuum worker\s+(\S+)/.exec(title);
  if (av) return av[1] === dbName ? "db" : "other";
  if (
    /^(checkpointer|background writer|walwriter|autovacuum launcher|logical replication launcher|archiver|startup|stats collector)\b/.test(
      title,
    )
  )
    return "background";
  // "user database host(port) state"; anything else (a parallel worker, a WAL sender) is not the bench's.
  const parts = title.split(/\s+/);
  if (parts.length < 3) return null;
  return parts[1] === dbName ? "db" : "other";
}

/**
 * Opens a meter on the server of `url` (the bench's database). `measure(fn)` runs fn and
 * returns what the server spent meanwhile: { cpuUs: { db, background, server, other } | null, walBytes, walDbBytes | null }.
 * The meter's own queries go to the `postgres` database, so they never count as the bench database's.
 */
export async function openServerCost({ url = PG_URL, sampleMs = 10 } = {}) {
  const dbName = decodeURIComponent(new URL(url).pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const probe = new pg.Client({ connectionString: admin.toString() });
  // A server restart or a terminated backend fails the next query; this keeps the process up until then.
  probe.on("error", () => {});
  await probe.connect();
  const q = async (sql, params) => (await probe.query(sql, params)).rows[0];
  const { pid: probePid } = await q("SELECT pg_backend_pid() AS pid");
  const { cluster } = await q("SELECT current_setting('cluster_name') AS cluster");
  const { oid: dbOid } = await q("SELECT oid::text AS oid FROM pg_database WHERE datname = $1", [dbName]);
  const { dir } = await q("SELECT current_setting('data_directory') AS dir");
  const walDir = `${dir}/pg_wal`;
  const probeStat = statFields(probePid);
  const postmaster = probeStat ? Number(probeStat[1]) : null;
  const procOk = postmaster !== null && statFields(postmaster) !== null;
  const waldump = procOk && existsSync(walDir) ? findWaldump() : null;
  const hz = clockTicks();
  const titles = new Map(); // "pid start" → class, once the process title says

  /** One look at every child of the postmaster: "pid start" → CPU ticks, plus the postmaster's counters. */
  const look = () => {
    // Taken again if the postmaster reaped a child meanwhile: its CPU would otherwise be
    // missed (gone from the list, not yet in cutime) or counted twice.
    for (let tries = 0; ; tries++) {
      const pm = statFields(postmaster);
      if (!pm) throw new Error(`the PostgreSQL postmaster (pid ${postmaster}) is gone: the server restarted`);
      const before = cpuOf(pm);
      const kids = new Map();
      for (const pid of childrenOf(postmaster)) {
        const f = statFields(pid);
        if (!f) continue;
        const c = cpuOf(f);
        const id = `${pid} ${c.start}`;
        if (!titles.get(id)) titles.set(id, classify(pid, dbName, cluster));
        kids.set(id, c.own);
      }
      const p = cpuOf(statFields(postmaster));
      if (p.children === before.children || tries >= 20) return { kids, pmOwn: p.own, pmChildren: p.children };
    }
  };

  // A temporary replication slot keeps the window's WAL on disk until pg_waldump has read it:
  // without it a checkpoint may recycle the first segments of a long window. Temporary, so it
  // goes with the probe's connection whatever happens.
  const slot = `bench_cost_${process.pid}`;

  async function measure(fn) {
    if (waldump) await q("SELECT pg_create_physical_replication_slot($1, true, true)", [slot]);
    try {
      return await measureWindow(fn);
    } finally {
      if (waldump) await q("SELECT pg_drop_replication_slot($1)", [slot]);
    }
  }

  async function measureWindow(fn) {
    const walStart = (await q("SELECT pg_current_wal_insert_lsn()::text AS l")).l;
    const spent = new Map(); // "pid start" → ticks spent in the window
    let unattributed = 0;
    let first = null;
    let prev = null;
    const step = () => {
      const now = look();
      if (prev) {
        // Counted per process: growth since the previous look (a new process from zero).
        for (const [id, cpu] of now.kids) spent.set(id, (spent.get(id) ?? 0) + cpu - (prev.kids.get(id) ?? 0));
        // Processes gone since: the postmaster's cutime grew by their whole CPU; what it
        // grew beyond their last looks is their tail, shared among them.
        const gone = [...prev.kids].filter(([id]) => !now.kids.has(id));
        const tail = now.pmChildren - prev.pmChildren - gone.reduce((a, [, cpu]) => a + cpu, 0);
        if (gone.length) for (const [id] of gone) spent.set(id, (spent.get(id) ?? 0) + tail / gone.length);
        else unattributed += tail;
      } else first = now;
      prev = now;
    };
    let result;
    let timer = null;
    let lost = null; // a look that failed (the server restarted): the window is void
    if (procOk) {
      step();
      timer = setInterval(() => {
        try {
          step();
        } catch (e) {
          lost ??= e;
        }
      }, sampleMs);
    }
    try {
      result = await fn();
    } finally {
      if (timer) clearInterval(timer);
    }
    if (lost) throw lost;
    if (procOk) step();
    const walEnd = (await q("SELECT pg_current_wal_insert_lsn()::text AS l")).l;
    const { d } = await q("SELECT pg_wal_lsn_diff($1, $2)::float8 AS d", [walEnd, walStart]);
    const us = (ticks) => (ticks * 1e6) / hz;
    let cpuUs = null;
    if (procOk) {
      // A process whose title never settled (it lived a few ms) is not the bench's.
      const sums = { db: 0, background: 0, other: unattributed };
      for (const [id, ticks] of spent) sums[titles.get(id) ?? "other"] += ticks;
      const total = (s) => [...s.kids.values()].reduce((a, cpu) => a + cpu, 0) + s.pmOwn + s.pmChildren;
      cpuUs = {
        db: us(sums.db),
        background: us(sums.background + prev.pmOwn - first.pmOwn),
        other: us(sums.other),
        server: us(total(prev) - total(first)),
      };
    }
    const walDbBytes = waldump ? await walOfDatabase(waldump, walDir, walStart, walEnd, dbOid, d, q) : null;
    return { result, cpuUs, walBytes: d, walDbBytes };
  }

  return {
    /** Whether the CPU figures are available (the server's /proc entries are readable). */
    cpu: procOk,
    /** Whether the database's own WAL is available (pg_waldump can read the server's pg_wal). */
    walByDatabase: waldump !== null,
    measure,
    close: () => probe.end(),
  };
}

/** pg_waldump of the server's major version, if installed where Debian or the PATH has it. */
export function findWaldump() {
  for (const cand of ["/usr/lib/postgresql/15/bin/pg_waldump", "/usr/lib/postgresql/16/bin/pg_waldump", "pg_waldump"]) {
    try {
      execFileSync(cand, ["--version"], { stdio: "ignore" });
      return cand;
    } catch {
      // not this one
    }
  }
  return null;
}

/**
 * Bytes of the WAL records from `start` to `end` that belong to database `dbOid`: a record
 * naming a relation of it, or any record of a transaction that wrote one (its commit).
 * Waits until the server has flushed up to `end` so pg_waldump can read it all.
 */
async function walOfDatabase(waldump, walDir, start, end, dbOid, lsnDistance, q) {
  if (lsnDistance <= 0) return 0; // nothing written: pg_waldump would find no record to start at
  for (let i = 0; i < 200; i++) {
    const { ok } = await q("SELECT pg_wal_lsn_diff(pg_current_wal_flush_lsn(), $1) >= 0 AS ok", [end]);
    if (ok) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const align = (n) => Math.ceil(n / 8) * 8;
  const byTx = new Map(); // xid → aligned bytes of its records without a relation
  const dbTx = new Set();
  let all = 0;
  let mine = 0;
  const child = spawn(waldump, ["-p", walDir, "-s", start, "-e", end], { stdio: ["ignore", "pipe", "pipe"] });
  let errors = "";
  child.stderr.on("data", (b) => (errors += b));
  const lines = createInterface({ input: child.stdout });
  const re = /len \(rec\/tot\):\s*\d+\/\s*(\d+), tx:\s*(\d+),/;
  const relRe = / rel \d+\/(\d+)\/\d+/;
  for await (const line of lines) {
    const m = re.exec(line);
    if (!m) continue;
    const bytes = align(Number(m[1]));
    const tx = m[2];
    all += bytes;
    const rel = relRe.exec(line);
    if (rel) {
      if (rel[1] === dbOid) {
        mine += bytes;
        if (tx !== "0") dbTx.add(tx);
      }
    } else if (tx !== "0") byTx.set(tx, (byTx.get(tx) ?? 0) + bytes);
  }
  const code = await new Promise((r) => (child.exitCode !== null ? r(child.exitCode) : child.once("exit", r)));
  if (code !== 0) throw new Error(`pg_waldump ${start}..${end} failed (${code}): ${errors.trim().split("\n")[0]}`);
  for (const [tx, bytes] of byTx) if (dbTx.has(tx)) mine += bytes;
  return all ? (mine * lsnDistance) / all : 0;
}
