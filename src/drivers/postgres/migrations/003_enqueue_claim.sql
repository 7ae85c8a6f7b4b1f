-- workpool schema for PostgreSQL, version 3: enqueue_claim(), which inserts one new work
-- and, in the same transaction, claims it for a worker of the enqueuing process.
-- :"schema" is replaced by the store's quoted schema name before this file runs.

-- A process that runs a worker of the pool with room to spare need not wait for its own
-- enqueue to commit, be announced and be claimed in a second transaction: this function
-- inserts the row already `running` for p_worker when the pool has a free slot and no
-- other due work is waiting (so the new work never jumps the queue), under the pool's
-- lock like claim(). Otherwise it inserts the row `pending` and notifies, as the insert
-- statements do. Returns whether the row was claimed.
CREATE FUNCTION :"schema".enqueue_claim(
  p_id TEXT, p_pool TEXT, p_kind TEXT, p_fn_name TEXT, p_name TEXT, p_args TEXT, p_run_at BIGINT, p_enqueued_at BIGINT,
  p_retry TEXT, p_timeout_ms BIGINT, p_on_complete TEXT, p_context TEXT, p_channel TEXT,
  p_worker TEXT, p_now BIGINT, p_lease_until BIGINT)
RETURNS BOOLEAN
LANGUAGE plpgsql VOLATILE
AS $$
#variable_conflict use_column
DECLARE
  v_max INTEGER;
  v_running INTEGER;
  v_claim BOOLEAN := FALSE;
BEGIN
  IF p_run_at <= p_now THEN
    SELECT p.max_parallelism INTO v_max FROM :"schema".pools p WHERE p.name = p_pool FOR UPDATE;
    IF FOUND THEN
      SELECT count(*)::int INTO v_running FROM :"schema".work w WHERE w.pool = p_pool AND w.state = 'running';
      IF v_running < v_max THEN
        v_claim := NOT EXISTS (SELECT 1 FROM :"schema".work w WHERE w.pool = p_pool AND w.state = 'pending' AND w.run_at <= p_now);
      END IF;
    END IF;
  END IF;
  INSERT INTO :"schema".work (id, pool, kind, fn_name, name, args, state, run_at, enqueued_at, retry, timeout_ms, on_complete,
                              context, attempt, worker_id, lease_until, started_at)
  VALUES (p_id, p_pool, p_kind, p_fn_name, p_name, p_args, CASE WHEN v_claim THEN 'running' ELSE 'pending' END, p_run_at,
          p_enqueued_at, p_retry, p_timeout_ms, p_on_complete, p_context, CASE WHEN v_claim THEN 1 ELSE 0 END,
          CASE WHEN v_claim THEN p_worker END, CASE WHEN v_claim THEN p_lease_until END, CASE WHEN v_claim THEN p_now END);
  IF NOT v_claim THEN
    PERFORM pg_notify(p_channel, p_pool);
  END IF;
  RETURN v_claim;
END
$$;
