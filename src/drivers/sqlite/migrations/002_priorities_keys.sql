-- Priorities, per-key parallelism and unique keys.

-- Most running attempts of one key of the pool; NULL: no per-key limit.
ALTER TABLE workpool_pools ADD COLUMN key_parallelism INTEGER;

-- Claim order among due work: lower first (-1000..1000).
ALTER TABLE workpool_work ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
-- The key whose running attempts key_parallelism limits.
ALTER TABLE workpool_work ADD COLUMN key TEXT;
-- Unique among the pool's pending work; cleared when the work starts, so the key is free again.
ALTER TABLE workpool_work ADD COLUMN unique_key TEXT;
-- 1 while pending work is set aside because its key was at its limit when a claim walked past it: it
-- leaves the claim's index, so the backlog of a key at its limit is walked once, not by every claim.
ALTER TABLE workpool_work ADD COLUMN parked INTEGER NOT NULL DEFAULT 0;

-- Claim: due pending work of a pool that is not parked, one priority at a time, each in (run_at, id)
-- order as the range run_at <= now (so work scheduled for later is never walked); also the next run_at.
DROP INDEX workpool_work_pending;
CREATE INDEX workpool_work_ready ON workpool_work (pool, priority, run_at) WHERE state = 'pending' AND parked = 0;
-- Parked work of one key, in claim order: what a claim gives back once the key has room again.
CREATE INDEX workpool_work_parked ON workpool_work (pool, key, priority, run_at) WHERE state = 'pending' AND parked = 1;
-- Running attempts per key.
CREATE INDEX workpool_work_running_key ON workpool_work (pool, key) WHERE state = 'running' AND key IS NOT NULL;
-- Unique keys among pending work: two enqueues racing for one key make one work.
CREATE UNIQUE INDEX workpool_work_unique_key ON workpool_work (pool, unique_key) WHERE state = 'pending' AND unique_key IS NOT NULL;

-- Keys whose running attempts ended since the pool's last claim: that claim gives back the parked work
-- each has room for. Written by a trigger, so every transition out of running adds its key, whichever
-- statement or process writes it.
CREATE TABLE workpool_freed_keys (
  pool TEXT NOT NULL,
  key  TEXT NOT NULL,
  PRIMARY KEY (pool, key)
) WITHOUT ROWID;

CREATE TRIGGER workpool_work_key_freed AFTER UPDATE OF state ON workpool_work
  WHEN OLD.state = 'running' AND NEW.state <> 'running' AND OLD.key IS NOT NULL
BEGIN
  INSERT OR IGNORE INTO workpool_freed_keys (pool, key) VALUES (OLD.pool, OLD.key);
END;
