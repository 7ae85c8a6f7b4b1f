-- The due rows a claim takes while the pending work it meets has no key: up to p_free, priority by priority,
-- each the index range run_at <= now; NULL as soon as a priority it reaches has keyed work (the caller
-- then gives keys turns with pick_turns(), which takes the same rows of the priorities before). Within
-- the priority of the caller's last claim, rows after its key (p_after_*) first, past the dead index
-- entries claims leave at the head until a vacuum (walking them cost about 0.2 ms of a 1 ms claim), then
-- the rest up to the key (rows this transaction locked are not skipped by SKIP LOCKED: the two parts must
-- not overlap). No SET clause: it runs under claim()'s settings, and a SET clause costs every call a save
-- and restore of the settings.
CREATE OR REPLACE FUNCTION :"schema".pick_plain(p_pool TEXT, p_now BIGINT, p_free INTEGER,
  p_after_priority INTEGER, p_after_run_at BIGINT, p_after_id TEXT)
RETURNS TID[]
LANGUAGE plpgsql VOLATILE
AS $$
#variable_conflict use_column
DECLARE
  v_rows TID[] := '{}';
  v_prio INTEGER;
BEGIN
  IF p_after_id IS NOT NULL AND NOT EXISTS (
      SELECT 1 FROM :"schema".work w
      WHERE w.pool = p_pool AND w.state = 'pending' AND NOT w.parked AND w.priority < p_after_priority) THEN
    v_prio := p_after_priority;
  ELSE
    v_prio := :"schema".next_priority(p_pool, NULL);
  END IF;
  WHILE v_prio IS NOT NULL LOOP
    -- Work with keys at this priority: they take turns (pick_turns()). One probe of work_ready_key, which
    -- holds keys first within a priority, so it stops at the first entry.
    IF EXISTS (SELECT 1 FROM :"schema".work w WHERE w.pool = p_pool AND w.state = 'pending' AND NOT w.parked
               AND w.priority = v_prio AND w.key IS NOT NULL) THEN
      RETURN NULL;
    END IF;
    IF p_after_id IS NOT NULL AND v_prio = p_after_priority THEN
      v_rows := v_rows || ARRAY(SELECT w.ctid FROM :"schema".work w
        WHERE w.pool = p_pool AND w.state = 'pending' AND NOT w.parked AND w.priority = v_prio AND w.run_at <= p_now
          AND (w.run_at, w.id) > (p_after_run_at, p_after_id)
        ORDER BY w.run_at, w.id LIMIT p_free - cardinality(v_rows) FOR UPDATE SKIP LOCKED);
      IF cardinality(v_rows) < p_free THEN
        v_rows := v_rows || ARRAY(SELECT w.ctid FROM :"schema".work w
          WHERE w.pool = p_pool AND w.state = 'pending' AND NOT w.parked AND w.priority = v_prio AND w.run_at <= p_now
            AND (w.run_at, w.id) <= (p_after_run_at, p_after_id)
          ORDER BY w.run_at, w.id LIMIT p_free - cardinality(v_rows) FOR UPDATE SKIP LOCKED);
      END IF;
    ELSE
      v_rows := v_rows || ARRAY(SELECT w.ctid FROM :"schema".work w
        WHERE w.pool = p_pool AND w.state = 'pending' AND NOT w.parked AND w.priority = v_prio AND w.run_at <= p_now
        ORDER BY w.run_at, w.id LIMIT p_free - cardinality(v_rows) FOR UPDATE SKIP LOCKED);
    END IF;
    EXIT WHEN cardinality(v_rows) >= p_free;
    v_prio := :"schema".next_priority(p_pool, v_prio);
  END LOOP;
  RETURN v_rows;
END
$$;
