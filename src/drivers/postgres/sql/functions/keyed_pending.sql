-- Whether unparked pending work of the pool has a key: one probe of work_ready_key per priority present
-- (a filter on the key across priorities would walk every row without one; within a priority the keys
-- come first, so the probe stops at the first entry). p_from: a priority to start at when no work of a
-- lower one is pending, as pick_plain() starts (the caller's last claim's), which skips the dead entries
-- claims leave at the head of work_ready until a vacuum; NULL: the lowest. A pool whose work has no key
-- claims with the set-based pick_plain(); one with keys gives them turns (pick_turns()).
CREATE OR REPLACE FUNCTION :"schema".keyed_pending(p_pool TEXT, p_from INTEGER)
RETURNS BOOLEAN
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
  v_prio INTEGER;
BEGIN
  IF p_from IS NOT NULL AND NOT EXISTS (
      SELECT 1 FROM :"schema".work w
      WHERE w.pool = p_pool AND w.state = 'pending' AND NOT w.parked AND w.priority < p_from) THEN
    v_prio := p_from;
  ELSE
    v_prio := :"schema".next_priority(p_pool, NULL);
  END IF;
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
