-- The due rows a claim takes under a per-key rate limit: as pick_keyed(), walking due work in claim
-- order and taking a row while its key has room, where room is also the key's starts in its window
-- (p_started, plus rows taken here) under p_rate. A row whose key is at its per-key parallelism
-- (p_limit, NULL: none) is parked as pick_keyed() parks it; a row whose key is at its rate limit is
-- only passed over (its window opens with time, not with a freed slot). open_at: when the first window
-- of a passed-over key lets a start in, or NULL.
CREATE OR REPLACE FUNCTION :"schema".pick_rated(p_pool TEXT, p_now BIGINT, p_free INTEGER, p_limit INTEGER, p_running JSONB,
  p_rate INTEGER, p_period BIGINT, p_started JSONB, OUT rows TID[], OUT open_at BIGINT)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
AS $$
#variable_conflict use_column
DECLARE
  v_park TID[] := '{}';
  v_taken TEXT[] := '{}';
  v_held TEXT[] := '{}';
  v_prio INTEGER := :"schema".next_priority(p_pool, NULL);
  v_n INTEGER;
  r RECORD;
BEGIN
  rows := '{}';
  WHILE v_prio IS NOT NULL AND cardinality(rows) < p_free LOOP
    FOR r IN SELECT w.ctid, w.key FROM :"schema".work w
             WHERE w.pool = p_pool AND w.state = 'pending' AND NOT w.parked AND w.priority = v_prio AND w.run_at <= p_now
             ORDER BY w.run_at, w.id FOR UPDATE SKIP LOCKED LOOP
      IF r.key IS NULL THEN
        rows := rows || r.ctid;
      ELSE
        v_n := cardinality(array_positions(v_taken, r.key));
        IF p_limit IS NOT NULL AND coalesce((p_running ->> r.key)::INTEGER, 0) + v_n >= p_limit THEN
          v_park := v_park || r.ctid;
        ELSIF coalesce((p_started ->> r.key)::INTEGER, 0) + v_n >= p_rate THEN
          IF r.key <> ALL(v_held) THEN
            v_held := v_held || r.key;
          END IF;
        ELSE
          rows := rows || r.ctid;
          v_taken := v_taken || r.key;
        END IF;
      END IF;
      EXIT WHEN cardinality(rows) >= p_free;
    END LOOP;
    v_prio := :"schema".next_priority(p_pool, v_prio);
  END LOOP;
  IF cardinality(v_park) > 0 THEN
    UPDATE :"schema".work w SET parked = TRUE WHERE w.ctid = ANY(v_park);
  END IF;
  IF cardinality(v_held) > 0 THEN
    SELECT min(s.at) + p_period INTO open_at FROM :"schema".starts s
    WHERE s.pool = p_pool AND s.key = ANY(v_held) AND s.at > p_now - p_period;
  END IF;
END
$$;
