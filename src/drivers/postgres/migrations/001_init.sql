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
