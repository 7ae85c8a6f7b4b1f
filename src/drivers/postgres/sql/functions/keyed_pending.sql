-- Whether unparked pending work of the pool has a key: one probe of work_ready_key per priority present
-- (a filter on the key across priorities would walk every row without one). A pool whose work has no
-- key claims with the set-based pick_plain(); one with keys gives them turns (pick_turns()).
CREATE OR REPLACE FUNCTION :"schema".keyed_pending(p_pool TEXT)
RETURNS BOOLEAN
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
  v_prio INTEGER := :"schema".next_priority(p_pool, NULL);
BEGIN
  WHILE v_prio IS NOT NULL LOOP
    IF EXISTS (SELECT 1 FROM :"schema".work w WHERE w.pool = p_pool AND w.state = 'pending' AND NOT w.parked
               AND w.priority = v_prio AND w.key IS NOT NULL) THEN
      RETURN TRUE;
    END IF;
    v_prio := :"schema".next_priority(p_pool, v_prio);
  END LOOP;
  RETURN FALSE;
END
$$;
