-- Cron schedules and rate limits.

-- Rate limits of the pool: at most rate_limit attempts start in any window of rate_period_ms, and at
-- most key_rate_limit attempts of one key in any window of key_rate_period_ms. NULL: no limit.
ALTER TABLE workpool_pools ADD COLUMN rate_limit INTEGER;
ALTER TABLE workpool_pools ADD COLUMN rate_period_ms INTEGER;
ALTER TABLE workpool_pools ADD COLUMN key_rate_limit INTEGER;
ALTER TABLE workpool_pools ADD COLUMN key_rate_period_ms INTEGER;

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
