-- workpool schema for PostgreSQL: tables, indexes and the trigger. Times are epoch milliseconds
-- (BIGINT). :"schema" is replaced by the store's quoted schema name before this file runs.
-- The functions are not here: each is one file in ../sql/functions/, applied by its hash (migrate.ts).

-- The values work.kind, work.state and work.oc_state allow. A domain's check is cached per connection and
-- runs only where a column is written; a table CHECK is compiled on every write (8-15 µs per enqueue).
CREATE DOMAIN :"schema".work_kind AS TEXT CHECK (VALUE IN ('action', 'mutation'));
CREATE DOMAIN :"schema".work_state AS TEXT CHECK (VALUE IN ('pending', 'running', 'finished'));
CREATE DOMAIN :"schema".on_complete_state AS TEXT CHECK (VALUE IN ('none', 'pending', 'done', 'failed'));

-- Ids and pool names are compared on every claim, completion and lookup: COLLATE "C" compares bytes
-- instead of going through the database's locale. Ids are ASCII, so their order is JavaScript's.

-- One row per pool: its shared configuration. Claims lock this row (FOR UPDATE), which serializes
-- claims of one pool across every process: the global maxParallelism lock.
CREATE TABLE :"schema".pools (
  name               TEXT COLLATE "C" PRIMARY KEY,
  max_parallelism    INTEGER NOT NULL,
  log_level          TEXT NOT NULL,
  -- Most running attempts of one key of the pool; NULL: no per-key limit.
  key_parallelism    INTEGER,
  -- Set while the pool is paused (max_parallelism 0): the limit resume() restores.
  paused_from        INTEGER,
  -- Rate limits: at most rate_limit attempts start in any window of rate_period_ms, and at most
  -- key_rate_limit attempts of one key in any window of key_rate_period_ms. NULL: no limit.
  rate_limit         INTEGER,
  rate_period_ms     BIGINT,
  key_rate_limit     INTEGER,
  key_rate_period_ms BIGINT,
  -- The key whose turn the last claim gave last (NULL: work without a key, or none yet): the next claim
  -- gives turns from the key after it (see pick_turns()).
  turn_key           TEXT
);

-- Cumulative counters for the periodic report, spread over shards (see stats_shard()) and summed on
-- read, so concurrent completion transactions of one pool do not queue on one hot row.
CREATE TABLE :"schema".stats (
  pool      TEXT COLLATE "C" NOT NULL,
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
  pool       TEXT COLLATE "C" PRIMARY KEY,
  worker_id  TEXT NOT NULL,
  expires_at BIGINT NOT NULL
);

-- Every unit of work, from enqueue until retention deletes it.
CREATE TABLE :"schema".work (
  id               TEXT COLLATE "C" PRIMARY KEY,
  pool             TEXT COLLATE "C" NOT NULL,
  kind             :"schema".work_kind NOT NULL,
  fn_name          TEXT NOT NULL,
  name             TEXT,
  args             TEXT NOT NULL,
  state            :"schema".work_state NOT NULL,
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
  oc_state         :"schema".on_complete_state NOT NULL DEFAULT 'none',
  oc_attempts      INTEGER NOT NULL DEFAULT 0,
  oc_run_at        BIGINT,
  oc_error         TEXT,
  -- Claim order among due work, lower first (-1000..1000).
  priority         INTEGER NOT NULL DEFAULT 0,
  -- The key whose running attempts key_parallelism limits.
  key              TEXT,
  -- Unique among the pool's pending work; cleared when the work starts, so the key is free again.
  unique_key       TEXT,
  -- Set while pending work is set aside because its key was at its limit when a claim walked past it: it
  -- leaves the claim's index, so the backlog of a key at its limit is walked once, not by every claim.
  parked           BOOLEAN NOT NULL DEFAULT FALSE,
  -- The last 10 attempts of the work that threw or were lost, oldest first: a JSON array of
  -- {attempt, startedAt, endedAt, outcome, error: {message, name?, stack?}}. NULL until one fails.
  attempt_log      JSONB,
  -- JSON object, NULL when the work has none: onCompleteExcludeKinds (result kinds whose onComplete is
  -- skipped), logLevel (the work's own log threshold) and trace (the enqueuing span's propagation
  -- fields, such as traceparent), so each attempt's span joins the trace that enqueued the work.
  meta             TEXT,
  -- The work an admin retry made of this finished work: NULL until it is retried. A retry sets it
  -- where it inserts the new work, only while it is NULL, so a work is retried once.
  retried_as       TEXT
);

-- Claim: due pending work of a pool that is not parked, one priority at a time, each as the range
-- run_at <= now in (run_at, id) order, so work scheduled for later is never walked; also the next run_at.
CREATE INDEX work_ready ON :"schema".work (pool, priority, run_at, id) WHERE state = 'pending' AND NOT parked;
-- The same work by key: the next key with work (one probe), and each key's head, for the claim's turns.
CREATE INDEX work_ready_key ON :"schema".work (pool, priority, key, run_at, id) WHERE state = 'pending' AND NOT parked;
-- Parked work of one key, in claim order: what a claim gives back once the key has room again.
CREATE INDEX work_parked ON :"schema".work (pool, key, priority, run_at, id) WHERE state = 'pending' AND parked;
-- Running count and lease rescue.
CREATE INDEX work_running ON :"schema".work (pool, lease_until) WHERE state = 'running';
-- Running attempts per key.
CREATE INDEX work_running_key ON :"schema".work (pool, key) WHERE state = 'running' AND key IS NOT NULL;
-- Unique keys among pending work: two enqueues racing for one key make one work (INSERT ... ON CONFLICT).
CREATE UNIQUE INDEX work_unique_key ON :"schema".work (pool, unique_key) WHERE state = 'pending' AND unique_key IS NOT NULL;
-- Retention cleanup.
CREATE INDEX work_finished ON :"schema".work (pool, finished_at) WHERE state = 'finished';
-- onComplete retries.
CREATE INDEX work_on_complete ON :"schema".work (pool, oc_run_at) WHERE oc_state = 'pending';
-- Admin listings, newest first. Work enters them only by failing, so a job that succeeds at once
-- never touches them.
CREATE INDEX work_retrying ON :"schema".work (pool, id) WHERE state = 'pending' AND attempt > 0;
CREATE INDEX work_unsuccessful ON :"schema".work (pool, id)
  WHERE state = 'finished' AND result NOT LIKE '{"kind":"success"%';

-- Each row is updated twice soon after its insert, and claims walk the ready index past the dead
-- entries of claimed work until a vacuum: vacuum after 2 % of the rows changed (default 20 %).
ALTER TABLE :"schema".work SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.05);

-- Keys whose running attempts ended since the pool's last claim: that claim gives back the parked work
-- each has room for. Written by a trigger, so every transition out of running adds its key, whichever
-- statement writes it; its WHEN keeps work without a key from calling it at all. No primary key: two
-- transactions ending attempts of the same two keys in opposite orders would each wait, in the unique
-- index, for the other's uncommitted note (a deadlock). A claim takes every note of its pool, repeats
-- included.
CREATE TABLE :"schema".freed_keys (
  pool TEXT COLLATE "C" NOT NULL,
  key  TEXT NOT NULL
);
CREATE INDEX freed_keys_pool ON :"schema".freed_keys (pool);

-- note_freed_key() is created before this file runs (see migrate.ts).
-- Also unparked pending work of a key that leaves the queue without running (canceled, or its key
-- replaced): a claim may have given it back in place of parked work of its key, which would otherwise
-- wait for an attempt of that key that never comes.
CREATE TRIGGER work_key_freed AFTER UPDATE OF state, key ON :"schema".work
  FOR EACH ROW WHEN (OLD.key IS NOT NULL AND (
    (OLD.state = 'running' AND NEW.state <> 'running')
    OR (OLD.state = 'pending' AND NOT OLD.parked AND (NEW.state = 'finished' OR NEW.key IS DISTINCT FROM OLD.key))))
  EXECUTE FUNCTION :"schema".note_freed_key();

-- The attempt starts of a rate-limited pool within its longest window (older ones are pruned by the
-- claim): the claim counts them to keep each window at its limit. Written only while a limit is set.
CREATE TABLE :"schema".starts (
  pool TEXT COLLATE "C" NOT NULL,
  at   BIGINT NOT NULL,
  key  TEXT
);
CREATE INDEX starts_at ON :"schema".starts (pool, at);
CREATE INDEX starts_key ON :"schema".starts (pool, key, at) WHERE key IS NOT NULL;

-- Cron schedules: each tick's work is enqueued by the statement that advances next_run_at from the
-- value its process read (a compare-and-set in the statement that inserts the work), so each tick is
-- enqueued once. revision changes with every schedule() call, so a tick computed from an older
-- definition is refused.
CREATE TABLE :"schema".schedules (
  pool         TEXT COLLATE "C" NOT NULL,
  id           TEXT COLLATE "C" NOT NULL,
  cron         TEXT NOT NULL,
  timezone     TEXT NOT NULL,
  catch_up     TEXT NOT NULL CHECK (catch_up IN ('latest', 'none')),
  kind         :"schema".work_kind NOT NULL,
  fn_name      TEXT NOT NULL,
  args         TEXT NOT NULL,
  -- JSON of the enqueue options each tick's work gets (retry, timeoutMs, priority, key, name,
  -- onComplete, context).
  options      TEXT NOT NULL,
  next_run_at  BIGINT NOT NULL,
  last_tick    BIGINT,
  last_work_id TEXT,
  revision     INTEGER NOT NULL DEFAULT 1,
  created_at   BIGINT NOT NULL,
  updated_at   BIGINT NOT NULL,
  PRIMARY KEY (pool, id)
);
CREATE INDEX schedules_due ON :"schema".schedules (pool, next_run_at);
