-- Whether unparked pending work of the pool is due at p_now: one probe per priority present, each a
-- range of the index (a filter on run_at alone would walk the work scheduled for later).
CREATE OR REPLACE FUNCTION :"schema".due_exists(p_pool TEXT, p_now BIGINT)
RETURNS BOOLEAN
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
  v_prio INTEGER := :"schema".next_priority(p_pool, NULL);
BEGIN
  WHILE v_prio IS NOT NULL LOOP
    IF EXISTS (SELECT 1 FROM :"schema".work w WHERE w.pool = p_pool AND w.state = 'pending' AND NOT w.parked
               AND w.priority = v_prio AND w.run_at <= p_now) THEN
      RETURN TRUE;
    END IF;
    v_prio := :"schema".next_priority(p_pool, v_prio);
  END LOOP;
  RETURN FALSE;
END
$$;
