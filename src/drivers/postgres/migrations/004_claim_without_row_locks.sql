-- workpool schema for PostgreSQL, version 4: claim() takes no row locks of its own, and
-- work ids and pool names compare byte-wise.
-- :"schema" is replaced by the store's quoted schema name before this file runs.

-- Ids and pool names are compared on every claim, completion and lookup. Under the
-- database's collation (often a libc locale such as en_US.UTF-8 or C.UTF-8) each
-- comparison goes through the locale; "C" compares bytes. Ids are ASCII, so their order
-- is unchanged (it is also the order JavaScript's < gives). The indexes on these columns
-- are rebuilt; the tables are not rewritten.
ALTER TABLE :"schema".work
  ALTER COLUMN id TYPE TEXT COLLATE "C",
  ALTER COLUMN pool TYPE TEXT COLLATE "C";
ALTER TABLE :"schema".pools ALTER COLUMN name TYPE TEXT COLLATE "C";
ALTER TABLE :"schema".stats ALTER COLUMN pool TYPE TEXT COLLATE "C";
ALTER TABLE :"schema".leaders ALTER COLUMN pool TYPE TEXT COLLATE "C";

-- Version 2's claim() locked the rows it picked (FOR UPDATE SKIP LOCKED) and then updated
-- them: two writes, each with its WAL record, per claimed row. Claims of a pool already
-- run one at a time under the pool row's lock, so no other claim can pick the same rows;
-- the only other writer of pending rows, a cancel (which finishes them), is caught by the
-- update itself: it waits for that transaction, then re-evaluates the row's newest
-- version, which has a new tuple id and is no longer pending, and skips it. Same
-- signature and result as version 2.
CREATE OR REPLACE FUNCTION :"schema".claim(p_pool TEXT, p_worker TEXT, p_now BIGINT, p_lease_until BIGINT, p_limit INTEGER)
RETURNS TABLE (max_parallelism INTEGER, log_level TEXT, running_count INTEGER, next_run_at BIGINT, claimed JSON)
LANGUAGE plpgsql VOLATILE
AS $$
#variable_conflict use_column
DECLARE
  v_max INTEGER;
  v_level TEXT;
  v_running INTEGER;
  v_free INTEGER;
  v_rows TID[];
  v_claimed JSON;
  v_count INTEGER := 0;
  v_next BIGINT;
BEGIN
  -- The pool's lock: claims of one pool run one at a time across every process, until
  -- the caller's transaction commits.
  SELECT p.max_parallelism, p.log_level INTO v_max, v_level FROM :"schema".pools p WHERE p.name = p_pool FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  -- Each statement of a VOLATILE function takes a fresh snapshot under READ COMMITTED,
  -- so this count includes every claim committed before the lock was granted. Results
  -- commit without the pool lock, so the count is exact or too high, never too low.
  SELECT count(*)::int INTO v_running FROM :"schema".work w WHERE w.pool = p_pool AND w.state = 'running';
  v_free := greatest(0, least(p_limit, v_max - v_running));
  IF v_free > 0 THEN
    SELECT array_agg(s.ctid) INTO v_rows FROM (
      SELECT w.ctid FROM :"schema".work w
      WHERE w.pool = p_pool AND w.state = 'pending' AND w.run_at <= p_now
      ORDER BY w.run_at, w.id
      LIMIT v_free) s;
  END IF;
  IF v_rows IS NOT NULL THEN
    WITH c AS (
      UPDATE :"schema".work w
      SET state = 'running', attempt = w.attempt + 1, worker_id = p_worker, lease_until = p_lease_until, started_at = p_now
      WHERE w.ctid = ANY(v_rows) AND w.state = 'pending'
      RETURNING w.id, w.kind, w.fn_name, w.name, w.args, w.run_at, w.enqueued_at, w.attempt, w.retry, w.timeout_ms,
                w.on_complete, w.context, w.cancel_requested)
    -- Arrays rather than objects: no key names to build, send and parse. The other
    -- columns of a claimed row are known to the caller (its pool, worker, lease and time;
    -- a pending row has no result and no onComplete delivery yet).
    SELECT json_agg(json_build_array(c.id, c.kind, c.fn_name, c.name, c.args, c.run_at, c.enqueued_at, c.attempt,
                                     c.retry, c.timeout_ms, c.on_complete, c.context, c.cancel_requested)),
           count(*)::int
    INTO v_claimed, v_count FROM c;
  END IF;
  -- The earliest remaining run_at matters only when this claim ran out of due work: then
  -- the caller sleeps until it. A claim that took every row it could (or none, the pool
  -- being full) is followed by another claim anyway, so it skips the index walk, which on
  -- a busy queue first passes over the entries of work claimed since the last vacuum.
  -- After the update, so the rows just claimed are no longer pending. ORDER BY ... LIMIT 1
  -- rather than min(): the plan cached for this statement must read one index entry even
  -- if it was made while the table's statistics still said it was empty.
  IF v_count < v_free THEN
    SELECT w.run_at INTO v_next FROM :"schema".work w WHERE w.pool = p_pool AND w.state = 'pending' ORDER BY w.run_at LIMIT 1;
  END IF;
  RETURN QUERY SELECT v_max, v_level, v_running, v_next, v_claimed;
END
$$;
