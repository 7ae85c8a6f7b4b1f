-- Prototype (slots): start_rows() that also records each claimed row's slot and its holder.
CREATE OR REPLACE FUNCTION :"schema".start_rows_slots(p_pool TEXT, p_worker TEXT, p_now BIGINT, p_lease_until BIGINT, p_rows TID[],
  p_record BOOLEAN, p_slots INTEGER[])
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
        unique_key = NULL, slot = p_slots[array_position(p_rows, w.ctid)]
    WHERE w.ctid = ANY(p_rows)
    RETURNING w.id, w.kind, w.fn_name, w.name, w.args, w.run_at, w.enqueued_at, w.attempt, w.retry, w.timeout_ms,
              w.on_complete, w.context, w.cancel_requested, w.priority, w.key, w.meta, w.slot),
  h AS (UPDATE :"schema".slots s SET holder = c.id FROM c WHERE s.pool = p_pool AND s.slot = c.slot),
  s AS (
    INSERT INTO :"schema".starts (pool, at, key)
    SELECT p_pool, p_now, c.key FROM c WHERE p_record)
  SELECT json_agg(json_build_array(c.id, c.kind, c.fn_name, c.name, c.args, c.run_at, c.enqueued_at, c.attempt,
                                   c.retry, c.timeout_ms, c.on_complete, c.context, c.cancel_requested, c.priority, c.key, c.meta))
  INTO v_claimed FROM c;
  RETURN v_claimed;
END
$$;
