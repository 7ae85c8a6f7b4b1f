-- workpool schema for PostgreSQL, version 2: a claim planned for large tables, and
-- complete(), which writes a batch of action results and claims the freed slots in one
-- statement (one round trip, one commit).
-- :"schema" is replaced by the store's quoted schema name before this file runs.

-- Version 1's claim() was one statement of CTEs. The planner could not know how many
-- rows its LIMIT (free slots) would pass on, guessed a tenth of the table, and joined
-- the claimed ids to the work table with a hash join over a sequential scan: every
-- claim read the whole table. This version runs the steps as separate statements with
-- the counts in variables, so each step is an index lookup whatever the table's size.
-- It returns one row: the pool's config, the running count before the claim, the
-- earliest run_at of the pool's remaining pending work (NULL when none, or when the
-- claim took every row it could: see below), and the claimed rows as a JSON
-- array of arrays (NULL when none; columns as CLAIMED_COLUMNS in rows.ts). No row: the
-- pool has no config.
DROP FUNCTION :"schema".claim(TEXT, TEXT, BIGINT, BIGINT, INTEGER);
CREATE FUNCTION :"schema".claim(p_pool TEXT, p_worker TEXT, p_now BIGINT, p_lease_until BIGINT, p_limit INTEGER)
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
      LIMIT v_free
      FOR UPDATE SKIP LOCKED) s;
  END IF;
  IF v_rows IS NOT NULL THEN
    WITH c AS (
      UPDATE :"schema".work w
      SET state = 'running', attempt = w.attempt + 1, worker_id = p_worker, lease_until = p_lease_until, started_at = p_now
      WHERE w.ctid = ANY(v_rows)
      RETURNING w.id, w.kind, w.fn_name, w.name, w.args, w.run_at, w.enqueued_at, w.attempt, w.retry, w.timeout_ms,
                w.on_complete, w.context, w.cancel_requested)
    -- Arrays rather than objects: no key names to build, send and parse. The other
    -- columns of a claimed row are known to the caller (its pool, worker, lease and time;
    -- a pending row has no result and no onComplete delivery yet).
    SELECT json_agg(json_build_array(c.id, c.kind, c.fn_name, c.name, c.args, c.run_at, c.enqueued_at, c.attempt,
                                     c.retry, c.timeout_ms, c.on_complete, c.context, c.cancel_requested))
    INTO v_claimed FROM c;
  END IF;
  -- The earliest remaining run_at matters only when this claim ran out of due work: then
  -- the caller sleeps until it. A claim that took every row it could (or none, the pool
  -- being full) is followed by another claim anyway, so it skips the index walk, which on
  -- a busy queue first passes over the entries of work claimed since the last vacuum.
  -- After the update, so the rows just claimed are no longer pending. ORDER BY ... LIMIT 1
  -- rather than min(): the plan cached for this statement must read one index entry even
  -- if it was made while the table's statistics still said it was empty.
  IF coalesce(cardinality(v_rows), 0) < v_free THEN
    SELECT w.run_at INTO v_next FROM :"schema".work w WHERE w.pool = p_pool AND w.state = 'pending' ORDER BY w.run_at LIMIT 1;
  END IF;
  RETURN QUERY SELECT v_max, v_level, v_running, v_next, v_claimed;
END
$$;

-- Every row is updated twice (claim, finish) soon after it is inserted, and claims scan
-- the pending index from its oldest entry: the entries of work already claimed stay in
-- the way until a vacuum removes them. Vacuum this table after 2% of its rows changed
-- rather than the server's default 20%.
ALTER TABLE :"schema".work SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.05);

-- Writes the outcomes of a batch of action attempts, then (when p_limit > 0) claims work
-- for the slots they freed, in the caller's transaction: called on its own, the whole
-- batch is one round trip and one commit.
-- p_outcomes maps each id to [attempt, status, result, run_at], as the worker decided
-- from the row it claimed: status 'success' | 'failed' | 'canceled' with the RunResult
-- JSON text in result, or 'retrying' with the time it is due in run_at. Writes are
-- fenced: a row no longer running on that attempt (lease expired and rescued, handed
-- back) is left alone. A cancel requested while the attempt ran wins over its outcome:
-- the row finishes with p_canceled_result. The core sends only work without onComplete
-- here; should a row have one, it is marked for delivery by maintenance, never skipped.
-- Returns one row: the ids written, those of them that finished canceled by request, and
-- the claim's columns (all NULL when p_limit = 0).
CREATE FUNCTION :"schema".complete(
  p_pool TEXT, p_ids TEXT[], p_outcomes JSONB, p_canceled_result TEXT, p_now BIGINT, p_channel TEXT,
  p_worker TEXT, p_lease_until BIGINT, p_limit INTEGER)
RETURNS TABLE (applied TEXT[], canceled TEXT[], max_parallelism INTEGER, log_level TEXT, running_count INTEGER,
               next_run_at BIGINT, claimed JSON)
LANGUAGE plpgsql VOLATILE
AS $$
#variable_conflict use_column
DECLARE
  v_rows TID[];
  v_applied TEXT[];
  v_canceled TEXT[];
  v_succeeded INTEGER;
  v_failed INTEGER;
  v_canceled_n INTEGER;
  v_retries INTEGER;
BEGIN
  -- Lock in id order, as every multi-row writer of running work does, so two
  -- transactions locking overlapping sets cannot deadlock. The locked versions' tuple
  -- ids then drive the update: a TID scan, whatever the planner believes about the table.
  SELECT array_agg(s.ctid) INTO v_rows FROM (
    SELECT w.ctid FROM :"schema".work w WHERE w.id = ANY(p_ids) AND w.pool = p_pool ORDER BY w.id FOR UPDATE) s;
  -- Each row's outcome is a lookup in p_outcomes (a binary search in a JSONB object).
  WITH upd AS (
    UPDATE :"schema".work w SET
      state = CASE WHEN w.cancel_requested OR p_outcomes -> w.id ->> 1 <> 'retrying' THEN 'finished' ELSE 'pending' END,
      result = CASE WHEN w.cancel_requested THEN p_canceled_result ELSE p_outcomes -> w.id ->> 2 END,
      finished_at = CASE WHEN w.cancel_requested OR p_outcomes -> w.id ->> 1 <> 'retrying' THEN p_now END,
      run_at = CASE WHEN w.cancel_requested OR p_outcomes -> w.id ->> 1 <> 'retrying' THEN w.run_at
                    ELSE (p_outcomes -> w.id ->> 3)::BIGINT END,
      oc_state = CASE WHEN w.on_complete IS NULL OR (p_outcomes -> w.id ->> 1 = 'retrying' AND NOT w.cancel_requested)
                      THEN 'none' ELSE 'pending' END,
      oc_run_at = CASE WHEN w.on_complete IS NULL OR (p_outcomes -> w.id ->> 1 = 'retrying' AND NOT w.cancel_requested)
                       THEN NULL ELSE p_now END,
      worker_id = NULL,
      lease_until = NULL
    WHERE w.ctid = ANY(v_rows) AND w.state = 'running' AND w.attempt = (p_outcomes -> w.id ->> 0)::INTEGER
    RETURNING w.id, CASE WHEN w.cancel_requested THEN 'canceled' ELSE p_outcomes -> w.id ->> 1 END AS status
  )
  SELECT array_agg(upd.id), array_agg(upd.id) FILTER (WHERE upd.status = 'canceled'),
         count(*) FILTER (WHERE upd.status = 'success'), count(*) FILTER (WHERE upd.status = 'failed'),
         count(*) FILTER (WHERE upd.status = 'canceled'), count(*) FILTER (WHERE upd.status = 'retrying')
  INTO v_applied, v_canceled, v_succeeded, v_failed, v_canceled_n, v_retries
  FROM upd;
  IF v_applied IS NOT NULL THEN
    INSERT INTO :"schema".stats AS t (pool, shard, completed, succeeded, failed, retries, canceled)
    -- 16: the shard count of the stats table (STATS_SHARDS in statements.ts).
    VALUES (p_pool, pg_backend_pid() % 16, cardinality(v_applied), v_succeeded, v_failed, v_retries, v_canceled_n)
    ON CONFLICT (pool, shard) DO UPDATE SET
      completed = t.completed + excluded.completed, succeeded = t.succeeded + excluded.succeeded,
      failed = t.failed + excluded.failed, retries = t.retries + excluded.retries, canceled = t.canceled + excluded.canceled;
  END IF;
  -- Work going back to pending: other workers may need to re-arm their timers.
  IF v_retries > 0 THEN
    PERFORM pg_notify(p_channel, p_pool);
  END IF;
  IF p_limit > 0 THEN
    -- A LEFT JOIN: should the pool's config be gone, the written ids still come back.
    RETURN QUERY SELECT coalesce(v_applied, '{}'), coalesce(v_canceled, '{}'), c.max_parallelism, c.log_level,
                        c.running_count, c.next_run_at, c.claimed
                 FROM (SELECT 1) one
                 LEFT JOIN LATERAL :"schema".claim(p_pool, p_worker, p_now, p_lease_until, p_limit) c ON TRUE;
  ELSE
    RETURN QUERY SELECT coalesce(v_applied, '{}'), coalesce(v_canceled, '{}'), NULL::INTEGER, NULL::TEXT, NULL::INTEGER,
                        NULL::BIGINT, NULL::JSON;
  END IF;
END
$$;
