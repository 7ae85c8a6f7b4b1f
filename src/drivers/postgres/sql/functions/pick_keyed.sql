-- The due rows a claim takes under a per-key limit: up to p_free, walked in claim order priority by
-- priority, taking a row while its key has room (running attempts in p_running plus rows taken here) and
-- parking it otherwise. Row by row through a cursor, which stops as soon as p_free rows are taken; a
-- pool without a per-key limit takes the set-based pick_plain() instead. Without a LIMIT the planner
-- would read the whole range and sort it (a bitmap scan): sorts and bitmap scans are off, so the cursor
-- walks the index in order and reads only what it needs.
CREATE OR REPLACE FUNCTION :"schema".pick_keyed(p_pool TEXT, p_now BIGINT, p_free INTEGER, p_limit INTEGER, p_running JSONB)
RETURNS TID[]
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
AS $$
#variable_conflict use_column
DECLARE
  v_rows TID[] := '{}';
  v_park TID[] := '{}';
  v_taken TEXT[] := '{}';
  v_prio INTEGER := :"schema".next_priority(p_pool, NULL);
  r RECORD;
BEGIN
  WHILE v_prio IS NOT NULL AND cardinality(v_rows) < p_free LOOP
    FOR r IN SELECT w.ctid, w.key FROM :"schema".work w
             WHERE w.pool = p_pool AND w.state = 'pending' AND NOT w.parked AND w.priority = v_prio AND w.run_at <= p_now
             ORDER BY w.run_at, w.id FOR UPDATE SKIP LOCKED LOOP
      IF r.key IS NULL
         OR coalesce((p_running ->> r.key)::INTEGER, 0) + cardinality(array_positions(v_taken, r.key)) < p_limit THEN
        v_rows := v_rows || r.ctid;
        IF r.key IS NOT NULL THEN
          v_taken := v_taken || r.key;
        END IF;
        EXIT WHEN cardinality(v_rows) >= p_free;
      ELSE
        v_park := v_park || r.ctid;
      END IF;
    END LOOP;
    v_prio := :"schema".next_priority(p_pool, v_prio);
  END LOOP;
  IF cardinality(v_park) > 0 THEN
    UPDATE :"schema".work w SET parked = TRUE WHERE w.ctid = ANY(v_park);
  END IF;
  RETURN v_rows;
END
$$;
