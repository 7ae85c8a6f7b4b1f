-- workpool schema for PostgreSQL, version 1. Times are epoch milliseconds (BIGINT).
-- :"schema" is replaced by the store's quoted schema name before this file runs.

-- One row per pool: its shared configuration. Claims lock this row (FOR UPDATE), which
-- serializes claims of one pool across every process: the global maxParallelism lock.
CREATE TABLE :"schema".pools (
  name            TEXT PRIMARY KEY,
  max_parallelism INTEGER NOT NULL,
  log_level       TEXT NOT NULL
);

-- Cumulative counters for the periodic report. Unlike SQLite, each pool has several
-- rows (shards, chosen by connection) that are summed on read, so concurrent completion
-- transactions of one pool do not queue on one hot row.
CREATE TABLE :"schema".stats (
  pool      TEXT NOT NULL,
  shard     SMALLINT NOT NULL,
  completed BIGINT NOT NULL DEFAULT 0,
  succeeded BIGINT NOT NULL DEFAULT 0,
  failed    BIGINT NOT NULL DEFAULT 0,
  retries   BIGINT NOT NULL DEFAULT 0,
  canceled  BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (pool, shard)
);

-- Maintenance leadership: one lease row per pool.
CREATE TABLE :"schema".leaders (
  pool       TEXT PRIMARY KEY,
  worker_id  TEXT NOT NULL,
  expires_at BIGINT NOT NULL
);

-- Every unit of work, from enqueue until retention deletes it.
CREATE TABLE :"schema".work (
  id               TEXT PRIMARY KEY,
  pool             TEXT NOT NULL,
  kind             TEXT NOT NULL CHECK (kind IN ('action', 'mutation')),
  fn_name          TEXT NOT NULL,
  name             TEXT,
  args             TEXT NOT NULL,
  state            TEXT NOT NULL CHECK (state IN ('pending', 'running', 'finished')),
  run_at           BIGINT NOT NULL,
  enqueued_at      BIGINT NOT NULL,
  attempt          INTEGER NOT NULL DEFAULT 0,
  retry            TEXT,
  timeout_ms       BIGINT,
  on_complete      TEXT,
  context          TEXT,
  cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
  worker_id        TEXT,
  lease_until      BIGINT,
  started_at       BIGINT,
  result           TEXT,
  finished_at      BIGINT,
  oc_state         TEXT NOT NULL DEFAULT 'none' CHECK (oc_state IN ('none', 'pending', 'done', 'failed')),
  oc_attempts      INTEGER NOT NULL DEFAULT 0,
  oc_run_at        BIGINT,
  oc_error         TEXT
);

-- Claim: due pending work of a pool in (run_at, id) order; also the next run_at.
CREATE INDEX work_pending ON :"schema".work (pool, run_at, id) WHERE state = 'pending';
-- Running count and lease rescue.
CREATE INDEX work_running ON :"schema".work (pool, lease_until) WHERE state = 'running';
-- Retention cleanup.
CREATE INDEX work_finished ON :"schema".work (pool, finished_at) WHERE state = 'finished';
-- onComplete retries.
CREATE INDEX work_on_complete ON :"schema".work (pool, oc_run_at) WHERE oc_state = 'pending';

-- Claims up to p_limit due pending rows of a pool for a worker, never letting the pool's
-- running count exceed its max_parallelism, in one call (one round trip). It runs in
-- the caller's transaction (autocommit for a plain claim, or a completion transaction).
-- The first statement locks the pool's row, so claims of one pool run one at a time
-- across every process; the second takes a fresh snapshot (a VOLATILE function does, per
-- statement, under READ COMMITTED) that includes every earlier claim of the pool, counts
-- running rows and takes at most the free slots with FOR UPDATE SKIP LOCKED. Results
-- commit without the pool lock, so the count is exact or too high, never too low.
-- Returns one row per claimed work, or a single row with a NULL id when none was claimed;
-- every row also carries the pool's config, the running count before the claim and the
-- earliest run_at of the pool's remaining pending work. No row: the pool has no config.
CREATE FUNCTION :"schema".claim(p_pool TEXT, p_worker TEXT, p_now BIGINT, p_lease_until BIGINT, p_limit INTEGER)
RETURNS TABLE (
  max_parallelism INTEGER, log_level TEXT, running_count INTEGER, next_run_at BIGINT,
  id TEXT, pool TEXT, kind TEXT, fn_name TEXT, name TEXT, args TEXT, state TEXT, run_at BIGINT,
  enqueued_at BIGINT, attempt INTEGER, retry TEXT, timeout_ms BIGINT, on_complete TEXT, context TEXT,
  cancel_requested BOOLEAN, worker_id TEXT, lease_until BIGINT, started_at BIGINT, result TEXT,
  finished_at BIGINT, oc_state TEXT, oc_attempts INTEGER, oc_run_at BIGINT, oc_error TEXT)
LANGUAGE plpgsql VOLATILE
AS $$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM :"schema".pools p WHERE p.name = p_pool FOR UPDATE;
  RETURN QUERY
  WITH cfg AS (
    SELECT p.max_parallelism, p.log_level FROM :"schema".pools p WHERE p.name = p_pool
  ), running AS (
    SELECT count(*)::int AS n FROM :"schema".work w WHERE w.pool = p_pool AND w.state = 'running'
  ), picked AS (
    SELECT w.id FROM :"schema".work w
    WHERE w.pool = p_pool AND w.state = 'pending' AND w.run_at <= p_now
    ORDER BY w.run_at, w.id
    LIMIT greatest(0, least(p_limit, (SELECT c.max_parallelism FROM cfg c) - (SELECT r.n FROM running r)))
    FOR UPDATE SKIP LOCKED
  ), claimed AS (
    UPDATE :"schema".work w
    SET state = 'running', attempt = w.attempt + 1, worker_id = p_worker, lease_until = p_lease_until, started_at = p_now
    FROM picked WHERE w.id = picked.id
    RETURNING w.*
  ), summary AS (
    SELECT c.max_parallelism, c.log_level, (SELECT r.n FROM running r) AS running_count,
           (SELECT min(w.run_at) FROM :"schema".work w
            WHERE w.pool = p_pool AND w.state = 'pending' AND w.id NOT IN (SELECT k.id FROM picked k)) AS next_run_at
    FROM cfg c
  )
  SELECT s.max_parallelism, s.log_level, s.running_count, s.next_run_at,
         w.id, w.pool, w.kind, w.fn_name, w.name, w.args, w.state, w.run_at,
         w.enqueued_at, w.attempt, w.retry, w.timeout_ms, w.on_complete, w.context,
         w.cancel_requested, w.worker_id, w.lease_until, w.started_at, w.result,
         w.finished_at, w.oc_state, w.oc_attempts, w.oc_run_at, w.oc_error
  FROM summary s LEFT JOIN claimed w ON TRUE;
END
$$;
