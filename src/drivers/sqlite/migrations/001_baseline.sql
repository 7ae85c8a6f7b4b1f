-- workpool schema for SQLite. Times are epoch milliseconds.

-- One row per pool: its shared configuration.
CREATE TABLE workpool_pools (
  name            TEXT PRIMARY KEY,
  max_parallelism INTEGER NOT NULL,
  log_level       TEXT NOT NULL
) WITHOUT ROWID;

-- Cumulative counters for the periodic report.
CREATE TABLE workpool_stats (
  pool      TEXT PRIMARY KEY,
  completed INTEGER NOT NULL DEFAULT 0,
  succeeded INTEGER NOT NULL DEFAULT 0,
  failed    INTEGER NOT NULL DEFAULT 0,
  retries   INTEGER NOT NULL DEFAULT 0,
  canceled  INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- Maintenance leadership: one lease row per pool.
CREATE TABLE workpool_leaders (
  pool       TEXT PRIMARY KEY,
  worker_id  TEXT NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;

-- Every unit of work, from enqueue until retention deletes it.
CREATE TABLE workpool_work (
  id               TEXT PRIMARY KEY,
  pool             TEXT NOT NULL,
  kind             TEXT NOT NULL CHECK (kind IN ('action', 'mutation')),
  fn_name          TEXT NOT NULL,
  name             TEXT,
  args             TEXT NOT NULL,
  state            TEXT NOT NULL CHECK (state IN ('pending', 'running', 'finished')),
  run_at           INTEGER NOT NULL,
  enqueued_at      INTEGER NOT NULL,
  attempt          INTEGER NOT NULL DEFAULT 0,
  retry            TEXT,
  timeout_ms       INTEGER,
  on_complete      TEXT,
  context          TEXT,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  worker_id        TEXT,
  lease_until      INTEGER,
  started_at       INTEGER,
  result           TEXT,
  finished_at      INTEGER,
  oc_state         TEXT NOT NULL DEFAULT 'none' CHECK (oc_state IN ('none', 'pending', 'done', 'failed')),
  oc_attempts      INTEGER NOT NULL DEFAULT 0,
  oc_run_at        INTEGER,
  oc_error         TEXT
) WITHOUT ROWID;

-- Claim: due pending work of a pool in (run_at, id) order (an index of a WITHOUT ROWID table ends
-- with the primary key); also the next run_at.
CREATE INDEX workpool_work_pending ON workpool_work (pool, run_at) WHERE state = 'pending';
-- Running count and lease rescue.
CREATE INDEX workpool_work_running ON workpool_work (pool, lease_until) WHERE state = 'running';
-- Retention cleanup.
CREATE INDEX workpool_work_finished ON workpool_work (pool, finished_at) WHERE state = 'finished';
-- onComplete retries.
CREATE INDEX workpool_work_on_complete ON workpool_work (pool, oc_run_at) WHERE oc_state = 'pending';
