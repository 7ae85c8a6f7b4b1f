-- The earliest run_at of the pool's unparked pending work (parked work is due already), or NULL: one
-- probe per priority present, each the head of its range of the index.
CREATE OR REPLACE FUNCTION :"schema".next_run_at(p_pool TEXT)
RETURNS BIGINT
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
  v_prio INTEGER := :"schema".next_priority(p_pool, NULL);
  v_next BIGINT;
  v_at BIGINT;
BEGIN
  WHILE v_prio IS NOT NULL LOOP
    SELECT w.run_at INTO v_at FROM :"schema".work w
    WHERE w.pool = p_pool AND w.state = 'pending' AND NOT w.parked AND w.priority = v_prio ORDER BY w.run_at LIMIT 1;
    v_next := least(v_next, v_at);
    v_prio := :"schema".next_priority(p_pool, v_prio);
  END LOOP;
  RETURN v_next;
END
$$;
