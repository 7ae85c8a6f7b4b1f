-- workpool schema for SQLite. Times are epoch milliseconds.

-- One row per pool: its shared configuration.
CREATE TABLE workpool_pools (
  name               TEXT PRIMARY KEY,
  max_parallelism    INTEGER NOT NULL,
  log_level          TEXT NOT NULL,
  -- Most running attempts of one key of the pool; NULL: no per-key limit.
  key_parallelism    INTEGER,
  -- Set while the pool is paused (max_parallelism 0): the limit resume() restores.
  paused_from        INTEGER,
  -- Rate limits: at most rate_limit attempts start in any window of rate_period_ms, and at most
  -- key_rate_limit attempts of one key in any window of key_rate_period_ms. NULL: no limit.
  rate_limit         INTEGER,
  rate_period_ms     INTEGER,
  key_rate_limit     INTEGER,
  key_rate_period_ms INTEGER,
  -- The key whose turn the last claim gave last (NULL: work without a key, or none yet): the next claim
  -- gives turns from the key after it (see turns.ts).
  turn_key           TEXT
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
  oc_error         TEXT,
  -- Claim order among due work: lower first (-1000..1000).
  priority         INTEGER NOT NULL DEFAULT 0,
  -- The key whose running attempts key_parallelism limits.
  key              TEXT,
  -- Unique among the pool's pending work; cleared when the work starts, so the key is free again.
  unique_key       TEXT,
  -- 1 while pending work is set aside because its key was at its limit when a claim walked past it: it
  -- leaves the claim's index, so the backlog of a key at its limit is walked once, not by every claim.
  parked           INTEGER NOT NULL DEFAULT 0,
  -- The last 10 attempts of the work that threw or were lost, oldest first: a JSON array of
  -- {attempt, startedAt, endedAt, outcome, error: {message, name?, stack?}}. NULL until one fails.
  attempt_log      TEXT,
  -- JSON object, NULL when the work has none: onCompleteExcludeKinds (result kinds whose onComplete is
  -- skipped), logLevel (the work's own log threshold) and trace (the enqueuing span's propagation
  -- fields, such as traceparent), so each attempt's span joins the trace that enqueued the work.
  meta             TEXT,
  -- The work an admin retry made of this finished work: NULL until it is retried. A retry sets it
  -- where it inserts the new work, only while it is NULL, so a work is retried once.
  retried_as       TEXT
) WITHOUT ROWID;

-- An index of a WITHOUT ROWID table ends with the primary key (id), so each index below is also in
-- id order within its columns.

-- Claim: due pending work of a pool that is not parked, one priority at a time, each in (run_at, id)
-- order as the range run_at <= now (so work scheduled for later is never walked); also the next run_at.
CREATE INDEX workpool_work_ready ON workpool_work (pool, priority, run_at) WHERE state = 'pending' AND parked = 0;
-- The same work by key: the next key with work (one probe), and each key's head, for the claim's turns.
CREATE INDEX workpool_work_ready_key ON workpool_work (pool, priority, key, run_at) WHERE state = 'pending' AND parked = 0;
-- Parked work of one key, in claim order: what a claim gives back once the key has room again.
CREATE INDEX workpool_work_parked ON workpool_work (pool, key, priority, run_at) WHERE state = 'pending' AND parked = 1;
-- Running count and lease rescue.
CREATE INDEX workpool_work_running ON workpool_work (pool, lease_until) WHERE state = 'running';
-- Running attempts per key.
CREATE INDEX workpool_work_running_key ON workpool_work (pool, key) WHERE state = 'running' AND key IS NOT NULL;
-- Unique keys among pending work: two enqueues racing for one key make one work.
CREATE UNIQUE INDEX workpool_work_unique_key ON workpool_work (pool, unique_key) WHERE state = 'pending' AND unique_key IS NOT NULL;
-- Retention cleanup.
CREATE INDEX workpool_work_finished ON workpool_work (pool, finished_at) WHERE state = 'finished';
-- onComplete retries.
CREATE INDEX workpool_work_on_complete ON workpool_work (pool, oc_run_at) WHERE oc_state = 'pending';
-- Admin listings, newest first. Work enters them only by failing, so a job that succeeds at once
-- never touches them.
CREATE INDEX workpool_work_retrying ON workpool_work (pool) WHERE state = 'pending' AND attempt > 0;
CREATE INDEX workpool_work_unsuccessful ON workpool_work (pool)
  WHERE state = 'finished' AND result NOT LIKE '{"kind":"success"%';

-- Keys whose running attempts ended since the pool's last claim: that claim gives back the parked work
-- each has room for. Written by a trigger, so every transition out of running adds its key, whichever
-- statement or process writes it; and so does unparked pending work of a key that leaves the queue
-- without running (canceled, or its key replaced): a claim may have given it back in place of parked
-- work of its key, which would otherwise wait for an attempt of that key that never comes.
CREATE TABLE workpool_freed_keys (
  pool TEXT NOT NULL,
  key  TEXT NOT NULL,
  PRIMARY KEY (pool, key)
) WITHOUT ROWID;

CREATE TRIGGER workpool_work_key_freed AFTER UPDATE OF state, key ON workpool_work
  WHEN OLD.key IS NOT NULL AND (
    (OLD.state = 'running' AND NEW.state <> 'running')
    OR (OLD.state = 'pending' AND OLD.parked = 0 AND (NEW.state = 'finished' OR NEW.key IS NOT OLD.key)))
BEGIN
  INSERT OR IGNORE INTO workpool_freed_keys (pool, key) VALUES (OLD.pool, OLD.key);
END;

-- The attempt starts of a rate-limited pool within its longest window (older ones are pruned by the
-- claim): the claim counts them to keep each window at its limit. Written only while a limit is set.
CREATE TABLE workpool_starts (
  pool TEXT NOT NULL,
  at   INTEGER NOT NULL,
  key  TEXT
);
CREATE INDEX workpool_starts_at ON workpool_starts (pool, at);
CREATE INDEX workpool_starts_key ON workpool_starts (pool, key, at) WHERE key IS NOT NULL;

-- Cron schedules: each tick's work is enqueued by the process that advances next_run_at from the value
-- it read (a compare-and-set in the transaction that inserts the work), so each tick is enqueued once.
-- revision changes with every schedule() call, so a tick computed from an older definition is refused.
CREATE TABLE workpool_schedules (
  pool         TEXT NOT NULL,
  id           TEXT NOT NULL,
  cron         TEXT NOT NULL,
  timezone     TEXT NOT NULL,
  catch_up     TEXT NOT NULL CHECK (catch_up IN ('latest', 'none')),
  kind         TEXT NOT NULL CHECK (kind IN ('action', 'mutation')),
  fn_name      TEXT NOT NULL,
  args         TEXT NOT NULL,
  -- JSON of the enqueue options each tick's work gets (retry, timeoutMs, priority, key, name,
  -- onComplete, context).
  options      TEXT NOT NULL,
  next_run_at  INTEGER NOT NULL,
  last_tick    INTEGER,
  last_work_id TEXT,
  revision     INTEGER NOT NULL DEFAULT 1,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL,
  PRIMARY KEY (pool, id)
) WITHOUT ROWID;
CREATE INDEX workpool_schedules_due ON workpool_schedules (pool, next_run_at);
