// The raw reference of the CPU-per-job metric: the smallest SQL that does what a job
// needs, run on workpool's own schema through a connection opened by sqliteStore() (so
// with the same pragmas), in the same process as the workpool measurement it sits beside.
// No validation, no promises, no events: prepared statements in a synchronous loop.
import { performance } from "node:perf_hooks";

const POOL = "floor";

/** Ids shaped like workpool's (26 characters, rising), so the primary key costs the same. */
const idOf = (i) => `01floor${i.toString(36).padStart(19, "0")}`;

/** CPU µs spent since `start` (a process.cpuUsage() reading): user plus system. */
export function cpuSince(start) {
  const d = process.cpuUsage(start);
  return d.user + d.system;
}

/** The prepared statements of the reference on `db` (a migrated workpool database). */
function statements(db) {
  return {
    insert: db.prepare(
      `INSERT INTO workpool_work (id, pool, kind, fn_name, args, state, run_at, enqueued_at)
       VALUES (?, '${POOL}', 'action', 'noop', ?, 'pending', ?, ?)`,
    ),
    claim: db.prepare(
      `UPDATE workpool_work SET state = 'running', attempt = attempt + 1, worker_id = ?, lease_until = ?, started_at = ?
       WHERE id IN (SELECT id FROM workpool_work
         WHERE pool = '${POOL}' AND state = 'pending' AND parked = 0 AND priority = 0 AND run_at <= ? ORDER BY run_at, id LIMIT ?)
       RETURNING id, attempt, args`,
    ),
    finish: db.prepare(
      `UPDATE workpool_work SET state = 'finished', result = ?, finished_at = ?, worker_id = NULL, lease_until = NULL
       WHERE id = ? AND attempt = ? AND state = 'running'`,
    ),
    stats: db.prepare(
      `INSERT INTO workpool_stats (pool, completed, succeeded) VALUES ('${POOL}', ?, ?)
       ON CONFLICT (pool) DO UPDATE SET completed = completed + excluded.completed, succeeded = succeeded + excluded.succeeded`,
    ),
  };
}

/**
 * Enqueues `n` jobs one autocommit INSERT each (after `warmUp` unmeasured ones); returns
 * the CPU µs per job.
 */
export function floorEnqueueOne(db, n, warmUp = 200) {
  const { insert } = statements(db);
  const one = (i) => {
    const now = Date.now();
    insert.run(idOf(i), JSON.stringify({ i }), now, now);
  };
  for (let i = 0; i < warmUp; i++) one(1e9 + i);
  const cpu = process.cpuUsage();
  for (let i = 0; i < n; i++) one(i);
  return cpuSince(cpu) / n;
}

/** Enqueues `n` jobs in transactions of `batch` rows; returns the CPU µs per job. */
export function floorEnqueueBatch(db, n, batch) {
  const { insert } = statements(db);
  const write = db.transaction((from, to) => {
    const now = Date.now();
    for (let i = from; i < to; i++) insert.run(idOf(i), JSON.stringify({ i }), now, now);
  });
  write.immediate(1e9, 1e9 + 1); // warm up
  const cpu = process.cpuUsage();
  for (let from = 0; from < n; from += batch) write.immediate(from, Math.min(n, from + batch));
  return cpuSince(cpu) / n;
}

/**
 * Drains a backlog of `n` jobs (written first, unmeasured) `concurrency` at a time: each
 * transaction finishes the last batch (fenced by attempt), adds to the report counters
 * and claims the next, as workpool's completion does. Returns CPU µs per job and seconds.
 */
export function floorDrain(db, n, concurrency) {
  const s = statements(db);
  const fill = db.transaction((from, to) => {
    const now = Date.now();
    for (let i = from; i < to; i++) s.insert.run(idOf(i), JSON.stringify({ i }), now, now);
  });
  for (let from = 0; from < n; from += 10_000) fill.immediate(from, Math.min(n, from + 10_000));
  const result = JSON.stringify({ kind: "success" });
  const step = db.transaction((done) => {
    const now = Date.now();
    for (const r of done) s.finish.run(result, now, r.id, r.attempt);
    if (done.length) s.stats.run(done.length, done.length);
    return s.claim.all("floor-worker", now + 60_000, now, now, concurrency);
  });
  const t0 = performance.now();
  const cpu = process.cpuUsage();
  let completed = 0;
  let batch = step.immediate([]);
  while (batch.length) {
    for (const r of batch) JSON.parse(r.args); // the handler's arguments
    completed += batch.length;
    batch = step.immediate(batch);
  }
  return { usPerJob: cpuSince(cpu) / completed, seconds: (performance.now() - t0) / 1000, completed };
}
