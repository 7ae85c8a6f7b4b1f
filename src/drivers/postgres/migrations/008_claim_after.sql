-- workpool schema for PostgreSQL, version 8: a claim can start its walk of the pending
-- index after the last work its caller claimed.
-- :"schema" is replaced by the store's quoted schema name before this file runs.

-- A claim moves rows from pending to running; each leaves a dead entry at the head of
-- the pending index, and only a vacuum removes those (new entries go in at the other
-- end, so no insert ever clears them). Until then every claim walks over them from the
-- index's first entry: in a drain at maxParallelism 10, tens to hundreds of index pages
-- per claim, about 0.2 ms of a call that takes about 1 ms.
-- These versions take the key (run_at, id) of the last work the caller claimed. They
-- first take due rows after that key, which the index finds directly; only if those are
-- fewer than the free slots do they walk from the head for the rest, as before. Rows
-- that became due behind the key (work handed back by a stopping worker, work enqueued
-- with a time already past) are thus taken when the rows after it run short, or when the
-- caller next passes no key: the driver does so at least every 100 ms, so such work
-- waits at most about that long for its turn. The count and the limit are unchanged: a
-- key only chooses which due rows fill the free slots.
-- complete() restates version 7's body with the two new arguments passed on to claim();
-- see version 7 for why it is not a wrapper. The previous versions of both functions stay
-- (PostgreSQL tells them apart by their arguments) for processes still running the
-- previous version of workpool.

CREATE FUNCTION :"schema".claim(p_pool TEXT, p_worker TEXT, p_now BIGINT, p_lease_until BIGINT, p_limit INTEGER,
                                p_after_run_at BIGINT, p_after_id TEXT)
RETURNS TABLE (max_parallelism INTEGER, log_level TEXT, running_count INTEGER, next_run_at BIGINT, claimed JSON)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  v_max INTEGER;
  v_level TEXT;
  v_running INTEGER;
  v_free INTEGER;
  v_rows TID[];
  v_behind TID[];
  v_claimed JSON;
  v_next BIGINT;
BEGIN
  -- The pool's lock, then the count: as in version 2.
  SELECT p.max_parallelism, p.log_level INTO v_max, v_level FROM :"schema".pools p WHERE p.name = p_pool FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  SELECT count(*)::int INTO v_running FROM :"schema".work w WHERE w.pool = p_pool AND w.state = 'running';
  v_free := greatest(0, least(p_limit, v_max - v_running));
  -- Due rows after the caller's key: the index scan starts at the key.
  IF v_free > 0 AND p_after_id IS NOT NULL THEN
    SELECT array_agg(s.ctid) INTO v_rows FROM (
      SELECT w.ctid FROM :"schema".work w
      WHERE w.pool = p_pool AND w.state = 'pending' AND w.run_at <= p_now
        AND (w.run_at, w.id) > (p_after_run_at, p_after_id)
      ORDER BY w.run_at, w.id
      LIMIT v_free
      FOR UPDATE SKIP LOCKED) s;
  END IF;
  -- The rest from the head, up to the key (the rows after it are taken or locked). Rows
  -- this transaction locked above are not skipped by SKIP LOCKED, hence the bound.
  IF coalesce(cardinality(v_rows), 0) < v_free THEN
    SELECT array_agg(s.ctid) INTO v_behind FROM (
      SELECT w.ctid FROM :"schema".work w
      WHERE w.pool = p_pool AND w.state = 'pending' AND w.run_at <= p_now
        AND (p_after_id IS NULL OR (w.run_at, w.id) <= (p_after_run_at, p_after_id))
      ORDER BY w.run_at, w.id
      LIMIT v_free - coalesce(cardinality(v_rows), 0)
      FOR UPDATE SKIP LOCKED) s;
    -- array_cat treats a NULL array as empty; both NULL stays NULL (nothing claimed).
    v_rows := v_rows || v_behind;
  END IF;
  IF v_rows IS NOT NULL THEN
    WITH c AS (
      UPDATE :"schema".work w
      SET state = 'running', attempt = w.attempt + 1, worker_id = p_worker, lease_until = p_lease_until, started_at = p_now
      WHERE w.ctid = ANY(v_rows)
      RETURNING w.id, w.kind, w.fn_name, w.name, w.args, w.run_at, w.enqueued_at, w.attempt, w.retry, w.timeout_ms,
                w.on_complete, w.context, w.cancel_requested)
    SELECT json_agg(json_build_array(c.id, c.kind, c.fn_name, c.name, c.args, c.run_at, c.enqueued_at, c.attempt,
                                     c.retry, c.timeout_ms, c.on_complete, c.context, c.cancel_requested))
    INTO v_claimed FROM c;
  END IF;
  -- As in version 2: the earliest remaining run_at, only when the claim ran out of due work.
  IF coalesce(cardinality(v_rows), 0) < v_free THEN
    SELECT w.run_at INTO v_next FROM :"schema".work w WHERE w.pool = p_pool AND w.state = 'pending' ORDER BY w.run_at LIMIT 1;
  END IF;
  RETURN QUERY SELECT v_max, v_level, v_running, v_next, v_claimed;
END
$$;

-- Version 7's complete(), with the claim's key ($9, $10) passed on to claim().
CREATE FUNCTION :"schema".complete(
  p_pool TEXT, p_outcomes JSONB, p_canceled_result TEXT, p_now BIGINT, p_channel TEXT,
  p_worker TEXT, p_lease_until BIGINT, p_limit INTEGER, p_after_run_at BIGINT, p_after_id TEXT)
RETURNS TABLE (stale TEXT[], canceled TEXT[], max_parallelism INTEGER, log_level TEXT, running_count INTEGER,
               next_run_at BIGINT, claimed JSON)
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
  SELECT array_agg(s.ctid) INTO v_rows FROM (
    SELECT w.ctid FROM :"schema".work w WHERE w.id = ANY(v_ids) AND w.pool = p_pool ORDER BY w.id FOR UPDATE) s;
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
  IF v_retries > 0 THEN
    PERFORM pg_notify(p_channel, p_pool);
  END IF;
  v_stale := ARRAY(SELECT i FROM unnest(v_ids) i WHERE i <> ALL(coalesce(v_applied, '{}')));
  IF p_limit > 0 THEN
    RETURN QUERY SELECT v_stale, coalesce(v_canceled, '{}'), c.max_parallelism, c.log_level,
                        c.running_count, c.next_run_at, c.claimed
                 FROM (SELECT 1) one
                 LEFT JOIN LATERAL :"schema".claim(p_pool, p_worker, p_now, p_lease_until, p_limit,
                                                   p_after_run_at, p_after_id) c ON TRUE;
  ELSE
    RETURN QUERY SELECT v_stale, coalesce(v_canceled, '{}'), NULL::INTEGER, NULL::TEXT, NULL::INTEGER,
                        NULL::BIGINT, NULL::JSON;
  END IF;
END
$$;
