-- What the admin API needs: the limit a paused pool returns to, each work's recent failed attempts,
-- and indexes for listing work that is waiting to retry or finished without success.

-- Set while the pool is paused (max_parallelism 0): the limit resume() restores.
ALTER TABLE workpool_pools ADD COLUMN paused_from INTEGER;

-- The last 10 attempts of the work that threw or were lost, oldest first: a JSON array of
-- {attempt, startedAt, endedAt, outcome, error: {message, name?, stack?}}. NULL until one fails.
ALTER TABLE workpool_work ADD COLUMN attempt_log TEXT;

-- Listing, newest first (an index of a WITHOUT ROWID table ends with the primary key, id). Work
-- enters them only by failing, so a job that succeeds at once never touches them.
CREATE INDEX workpool_work_retrying ON workpool_work (pool) WHERE state = 'pending' AND attempt > 0;
CREATE INDEX workpool_work_unsuccessful ON workpool_work (pool)
  WHERE state = 'finished' AND result NOT LIKE '{"kind":"success"%';
