-- The rows p_rows of the pool moved to running for p_worker, as the JSON array of arrays claim() answers
-- with (PgClaimedRow in rows.ts); each start recorded in starts when p_record (the pool has a rate limit).
-- Its own function so that a column a worker needs is added here, not in claim().
CREATE OR REPLACE FUNCTION :"schema".start_rows(p_pool TEXT, p_worker TEXT, p_now BIGINT, p_lease_until BIGINT, p_rows TID[],
  p_record BOOLEAN)
RETURNS JSON
LANGUAGE plpgsql VOLATILE
AS $$
#variable_conflict use_column
DECLARE
  v_claimed JSON;
BEGIN
  WITH c AS (
    UPDATE :"schema".work w
    SET state = 'running', attempt = w.attempt + 1, worker_id = p_worker, lease_until = p_lease_until, started_at = p_now,
        unique_key = NULL
    WHERE w.ctid = ANY(p_rows)
    RETURNING w.id, w.kind, w.fn_name, w.name, w.args, w.run_at, w.enqueued_at, w.attempt, w.retry, w.timeout_ms,
              w.on_complete, w.context, w.cancel_requested, w.priority, w.key, w.meta),
  s AS (
    INSERT INTO :"schema".starts (pool, at, key)
    SELECT p_pool, p_now, c.key FROM c WHERE p_record)
  -- Arrays rather than objects: no key names to build, send and parse. The caller knows the other
  -- columns of a claimed row (its pool, worker, lease and time; no result or delivery yet).
  SELECT json_agg(json_build_array(c.id, c.kind, c.fn_name, c.name, c.args, c.run_at, c.enqueued_at, c.attempt,
                                   c.retry, c.timeout_ms, c.on_complete, c.context, c.cancel_requested, c.priority, c.key, c.meta)
                  -- In claim order, whatever order the update met the rows in.
                  ORDER BY c.priority, c.run_at, c.id)
  INTO v_claimed FROM c;
  RETURN v_claimed;
END
$$;
