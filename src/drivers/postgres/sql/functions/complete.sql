-- Writes the outcomes of a batch of action attempts, then (when p_limit > 0) claims work for the slots
-- they freed with claim() and the key given: one round trip and one commit per batch.
-- p_outcomes maps each id to [attempt, status, result, run_at, attempt_entry] (outcomesJson() in
-- complete.ts). A row no longer running on that attempt is left alone; a cancel requested meanwhile wins
-- (p_canceled_result). Returns one row: the ids not written, those that finished canceled by request,
-- and claim()'s columns (NULL when p_limit = 0). Plan settings as claim()'s.
CREATE OR REPLACE FUNCTION :"schema".complete(
  p_pool TEXT, p_outcomes JSONB, p_canceled_result TEXT, p_now BIGINT, p_channel TEXT,
  p_worker TEXT, p_lease_until BIGINT, p_limit INTEGER, p_after_priority INTEGER, p_after_run_at BIGINT, p_after_id TEXT)
RETURNS TABLE (stale TEXT[], canceled TEXT[], max_parallelism INTEGER, log_level TEXT, key_parallelism INTEGER,
               running_count INTEGER, next_run_at BIGINT, claimed JSON)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  v_ids TEXT[] := ARRAY(SELECT jsonb_object_keys(p_outcomes));
  v_rows TID[];
  v_applied TEXT[];
  v_stale TEXT[];
  v_canceled TEXT[];
  v_succeeded INTEGER;
  v_failed INTEGER;
  v_canceled_n INTEGER;
  v_retries INTEGER;
BEGIN
  -- Lock in id order, as every multi-row writer of running work does, so two transactions locking
  -- overlapping sets cannot deadlock. The locked rows' tuple ids then drive the update (a TID scan).
  SELECT array_agg(s.ctid) INTO v_rows FROM (
    SELECT w.ctid FROM :"schema".work w WHERE w.id = ANY(v_ids) AND w.pool = p_pool ORDER BY w.id FOR UPDATE) s;
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
      -- Only an attempt that threw has an entry. attempt_log_append() is not inlined here (its entry
      -- argument is too costly to repeat), so each call would parse and run it as its own query.
      attempt_log = CASE WHEN p_outcomes -> w.id -> 4 IS NULL THEN w.attempt_log
                    ELSE :"schema".attempt_log_append(w.attempt_log, CASE WHEN w.cancel_requested
                      THEN jsonb_set(p_outcomes -> w.id -> 4, '{outcome}', '"canceled"') ELSE p_outcomes -> w.id -> 4 END) END,
      worker_id = NULL,
      lease_until = NULL
    -- The state test is written so that no index predicate matches it: as w.state = 'running', the
    -- generic plan scans the running index (every entry, live or dead until a vacuum) instead of
    -- fetching the locked tuples by id.
    WHERE w.ctid = ANY(v_rows) AND (w.state || '') = 'running' AND w.attempt = (p_outcomes -> w.id ->> 0)::INTEGER
    RETURNING w.id, CASE WHEN w.cancel_requested THEN 'canceled' ELSE p_outcomes -> w.id ->> 1 END AS status
  )
  SELECT array_agg(upd.id), array_agg(upd.id) FILTER (WHERE upd.status = 'canceled'),
         count(*) FILTER (WHERE upd.status = 'success'), count(*) FILTER (WHERE upd.status = 'failed'),
         count(*) FILTER (WHERE upd.status = 'canceled'), count(*) FILTER (WHERE upd.status = 'retrying')
  INTO v_applied, v_canceled, v_succeeded, v_failed, v_canceled_n, v_retries
  FROM upd;
  IF v_applied IS NOT NULL THEN
    INSERT INTO :"schema".stats AS t (pool, shard, completed, succeeded, failed, retries, canceled)
    VALUES (p_pool, :"schema".stats_shard(), cardinality(v_applied), v_succeeded, v_failed, v_retries, v_canceled_n)
    ON CONFLICT (pool, shard) DO UPDATE SET
      completed = t.completed + excluded.completed, succeeded = t.succeeded + excluded.succeeded,
      failed = t.failed + excluded.failed, retries = t.retries + excluded.retries, canceled = t.canceled + excluded.canceled;
  END IF;
  -- Work going back to pending: other workers may need to re-arm their timers.
  IF v_retries > 0 THEN
    PERFORM pg_notify(p_channel, p_pool);
  END IF;
  -- The ids not written, in the order given (few or none: a linear scan is enough).
  v_stale := ARRAY(SELECT i FROM unnest(v_ids) i WHERE i <> ALL(coalesce(v_applied, '{}')));
  IF p_limit > 0 THEN
    -- A LEFT JOIN: should the pool's config be gone, the ids not written still come back.
    RETURN QUERY SELECT v_stale, coalesce(v_canceled, '{}'), c.max_parallelism, c.log_level, c.key_parallelism,
                        c.running_count, c.next_run_at, c.claimed
                 FROM (SELECT 1) one
                 LEFT JOIN LATERAL :"schema".claim(p_pool, p_worker, p_now, p_lease_until, p_limit,
                                                   p_after_priority, p_after_run_at, p_after_id) c ON TRUE;
  ELSE
    RETURN QUERY SELECT v_stale, coalesce(v_canceled, '{}'), NULL::INTEGER, NULL::TEXT, NULL::INTEGER, NULL::INTEGER,
                        NULL::BIGINT, NULL::JSON;
  END IF;
END
$$;
