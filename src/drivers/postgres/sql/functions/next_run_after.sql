-- The earliest run_at after p_now of the pool's unparked pending work, or NULL: one probe per priority.
-- What a claim held back by a per-key rate limit sleeps until, unless a key's window opens first.
CREATE OR REPLACE FUNCTION :"schema".next_run_after(p_pool TEXT, p_now BIGINT)
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
    WHERE w.pool = p_pool AND w.state = 'pending' AND NOT w.parked AND w.priority = v_prio AND w.run_at > p_now
    ORDER BY w.run_at LIMIT 1;
    v_next := least(v_next, v_at);
    v_prio := :"schema".next_priority(p_pool, v_prio);
  END LOOP;
  RETURN v_next;
END
$$;
