-- Inserts one new work and, when the pool has a free slot, its key (if any) is under the pool's per-key
-- limit, the pool has no rate limit and no other due work waits (so it never jumps the queue), claims it for
-- p_worker under the pool's lock like claim(); otherwise it inserts the row pending and notifies. Returns
-- whether the row was claimed. A row with a unique key never comes here. Plan settings as claim()'s.
CREATE OR REPLACE FUNCTION :"schema".enqueue_claim(
  p_id TEXT, p_pool TEXT, p_kind TEXT, p_fn_name TEXT, p_name TEXT, p_args TEXT, p_run_at BIGINT, p_enqueued_at BIGINT,
  p_retry TEXT, p_timeout_ms BIGINT, p_on_complete TEXT, p_context TEXT, p_priority INTEGER, p_key TEXT, p_meta TEXT, p_channel TEXT,
  p_worker TEXT, p_now BIGINT, p_lease_until BIGINT)
RETURNS BOOLEAN
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  v_max INTEGER;
  v_rated BOOLEAN;
  v_keys INTEGER;
  v_running INTEGER;
  v_claim BOOLEAN := FALSE;
BEGIN
  IF p_run_at <= p_now THEN
    SELECT p.max_parallelism, p.key_parallelism, p.rate_limit IS NOT NULL OR p.key_rate_limit IS NOT NULL
    INTO v_max, v_keys, v_rated FROM :"schema".pools p WHERE p.name = p_pool FOR UPDATE;
    -- A rate-limited pool records every start: its work starts through claim() only.
    IF FOUND AND NOT v_rated THEN
      SELECT count(*)::int INTO v_running FROM :"schema".work w WHERE w.pool = p_pool AND w.state = 'running';
      IF v_running < v_max THEN
        v_claim := NOT :"schema".due_exists(p_pool, p_now);
        -- Under a per-key limit: the key has room, and no freed key's parked work waits for its turn.
        IF v_claim AND v_keys IS NOT NULL THEN
          v_claim := NOT EXISTS (SELECT 1 FROM :"schema".freed_keys f WHERE f.pool = p_pool)
            AND (p_key IS NULL OR (SELECT count(*) FROM :"schema".work w
                                   WHERE w.pool = p_pool AND w.state = 'running' AND w.key = p_key) < v_keys);
        END IF;
      END IF;
    END IF;
  END IF;
  INSERT INTO :"schema".work (id, pool, kind, fn_name, name, args, state, run_at, enqueued_at, retry, timeout_ms, on_complete,
                              context, priority, key, meta, attempt, worker_id, lease_until, started_at)
  VALUES (p_id, p_pool, p_kind, p_fn_name, p_name, p_args, CASE WHEN v_claim THEN 'running' ELSE 'pending' END, p_run_at,
          p_enqueued_at, p_retry, p_timeout_ms, p_on_complete, p_context, p_priority, p_key, p_meta, CASE WHEN v_claim THEN 1 ELSE 0 END,
          CASE WHEN v_claim THEN p_worker END, CASE WHEN v_claim THEN p_lease_until END, CASE WHEN v_claim THEN p_now END);
  IF NOT v_claim THEN
    PERFORM pg_notify(p_channel, p_pool);
  END IF;
  RETURN v_claim;
END
$$;
