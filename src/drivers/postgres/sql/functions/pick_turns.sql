-- The due rows a claim takes when pending work has keys: up to p_free, lowest priority first, and within
-- a priority one row per key in turn, so a key with a short backlog starts within a few claims whatever
-- other keys hold. Keys take turns in key order (work without a key is one more key, after the others),
-- starting after the pool's turn_key, the key the last claim gave a turn last, and wrapping around. The
-- first round walks work_ready_key from key to key (one probe to the next key, one for its oldest due
-- row); while free slots remain, the keys served take further turns, each after the row it took last.
-- A key at its per-key parallelism (p_limit, NULL: none) has its due rows at this priority parked (they
-- leave both ready indexes until an attempt of the key ends: see unpark_keys()); a key at its rate limit (p_rate in p_period, given p_started) is passed
-- over, and open_at is when the first of those windows lets a start in. Keys passed over cost a probe
-- each: after p_free + 16 of them the claim stops looking for more keys (the next claim goes on after the
-- last key looked at), so a claim costs probes in proportion to the rows it takes, not to the keys.
-- A priority without keyed work takes its rows set-based in claim order, as pick_plain() does.
CREATE OR REPLACE FUNCTION :"schema".pick_turns(p_pool TEXT, p_now BIGINT, p_free INTEGER, p_limit INTEGER, p_running JSONB,
  p_rate INTEGER, p_period BIGINT, p_started JSONB, OUT rows TID[], OUT open_at BIGINT)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
AS $$
#variable_conflict use_column
DECLARE
  v_prio INTEGER := :"schema".next_priority(p_pool, NULL);
  v_turn TEXT;
  v_start TEXT;
  v_taken TEXT[] := '{}';
  v_held TEXT[] := '{}';
  v_misses INTEGER := 0;
  v_budget INTEGER := p_free + 16;
  -- The walk of the first round: 1 keys after v_start, 2 work without a key, 3 keys up to v_start
  -- (after wrapping), 4 done after work without a key (v_start NULL: nothing to wrap to).
  v_walking BOOLEAN;
  v_seg INTEGER;
  v_pos TEXT;
  -- The keys served (NULL: work without a key) and the last row each took: this round's, the next's.
  v_keys TEXT[];
  v_runs BIGINT[];
  v_ids TEXT[];
  v_next_keys TEXT[];
  v_next_runs BIGINT[];
  v_next_ids TEXT[];
  v_i INTEGER;
  v_key TEXT;
  v_after_run BIGINT;
  v_after_id TEXT;
  v_n INTEGER;
  v_ctid TID;
  v_run BIGINT;
  v_id TEXT;
BEGIN
  rows := '{}';
  SELECT p.turn_key INTO v_turn FROM :"schema".pools p WHERE p.name = p_pool;
  WHILE v_prio IS NOT NULL AND cardinality(rows) < p_free AND v_misses < v_budget LOOP
    IF NOT EXISTS (SELECT 1 FROM :"schema".work w WHERE w.pool = p_pool AND w.state = 'pending' AND NOT w.parked
                   AND w.priority = v_prio AND w.key IS NOT NULL) THEN
      -- key IS NULL: a keyed row committed since the check is left for the next claim, not taken unchecked.
      rows := rows || ARRAY(SELECT w.ctid FROM :"schema".work w
        WHERE w.pool = p_pool AND w.state = 'pending' AND NOT w.parked AND w.priority = v_prio AND w.run_at <= p_now
          AND w.key IS NULL
        ORDER BY w.run_at, w.id LIMIT p_free - cardinality(rows) FOR UPDATE SKIP LOCKED);
    ELSE
      v_start := v_turn;
      v_pos := v_turn;
      v_walking := TRUE;
      v_seg := 1;
      v_keys := '{}';
      v_runs := '{}';
      v_ids := '{}';
      v_next_keys := '{}';
      v_next_runs := '{}';
      v_next_ids := '{}';
      v_i := 1;
      LOOP
        EXIT WHEN cardinality(rows) >= p_free;
        IF v_walking THEN
          IF v_misses >= v_budget OR v_seg = 4 THEN
            v_walking := FALSE;
            CONTINUE;
          ELSIF v_seg = 2 THEN
            v_key := NULL;
            v_seg := CASE WHEN v_start IS NULL THEN 4 ELSE 3 END;
            v_pos := NULL;
          ELSE
            IF v_pos IS NULL THEN
              v_key := (SELECT w.key FROM :"schema".work w
                        WHERE w.pool = p_pool AND w.state = 'pending' AND NOT w.parked AND w.priority = v_prio
                          AND w.key IS NOT NULL ORDER BY w.key LIMIT 1);
            ELSE
              v_key := (SELECT w.key FROM :"schema".work w
                        WHERE w.pool = p_pool AND w.state = 'pending' AND NOT w.parked AND w.priority = v_prio
                          AND w.key > v_pos ORDER BY w.key LIMIT 1);
            END IF;
            IF v_key IS NULL OR (v_seg = 3 AND v_key > v_start) THEN
              IF v_seg = 1 THEN
                v_seg := 2;
              ELSE
                v_walking := FALSE;
              END IF;
              CONTINUE;
            END IF;
            v_pos := v_key;
          END IF;
          v_after_run := NULL;
          v_after_id := NULL;
          -- Looked at: the next claim starts after this key even if it takes nothing here.
          v_turn := v_key;
        ELSE
          IF v_i > cardinality(v_keys) THEN
            EXIT WHEN cardinality(v_next_keys) = 0;
            v_keys := v_next_keys;
            v_runs := v_next_runs;
            v_ids := v_next_ids;
            v_next_keys := '{}';
            v_next_runs := '{}';
            v_next_ids := '{}';
            v_i := 1;
          END IF;
          v_key := v_keys[v_i];
          v_after_run := v_runs[v_i];
          v_after_id := v_ids[v_i];
          v_i := v_i + 1;
        END IF;
        -- The key's turn.
        v_n := CASE WHEN v_key IS NULL THEN 0 ELSE cardinality(array_positions(v_taken, v_key)) END;
        v_ctid := NULL;
        IF v_key IS NOT NULL AND p_limit IS NOT NULL AND coalesce((p_running ->> v_key)::INTEGER, 0) + v_n >= p_limit THEN
          -- Rows this claim took are still pending: they stay out.
          UPDATE :"schema".work w SET parked = TRUE WHERE w.ctid = ANY(ARRAY(
            SELECT x.ctid FROM :"schema".work x
            WHERE x.pool = p_pool AND x.state = 'pending' AND NOT x.parked AND x.priority = v_prio AND x.key = v_key
              AND x.run_at <= p_now AND x.ctid <> ALL(rows)
            FOR UPDATE SKIP LOCKED));
        ELSIF v_key IS NOT NULL AND p_rate IS NOT NULL AND coalesce((p_started ->> v_key)::INTEGER, 0) + v_n >= p_rate THEN
          IF v_key <> ALL(v_held) THEN
            v_held := v_held || v_key;
          END IF;
        ELSIF v_key IS NULL AND v_after_id IS NULL THEN
          SELECT x.ctid, x.run_at, x.id INTO v_ctid, v_run, v_id FROM :"schema".work x
          WHERE x.pool = p_pool AND x.state = 'pending' AND NOT x.parked AND x.priority = v_prio AND x.key IS NULL
            AND x.run_at <= p_now
          ORDER BY x.run_at, x.id LIMIT 1 FOR UPDATE SKIP LOCKED;
        ELSIF v_key IS NULL THEN
          SELECT x.ctid, x.run_at, x.id INTO v_ctid, v_run, v_id FROM :"schema".work x
          WHERE x.pool = p_pool AND x.state = 'pending' AND NOT x.parked AND x.priority = v_prio AND x.key IS NULL
            AND x.run_at <= p_now AND (x.run_at, x.id) > (v_after_run, v_after_id)
          ORDER BY x.run_at, x.id LIMIT 1 FOR UPDATE SKIP LOCKED;
        ELSIF v_after_id IS NULL THEN
          SELECT x.ctid, x.run_at, x.id INTO v_ctid, v_run, v_id FROM :"schema".work x
          WHERE x.pool = p_pool AND x.state = 'pending' AND NOT x.parked AND x.priority = v_prio AND x.key = v_key
            AND x.run_at <= p_now
          ORDER BY x.run_at, x.id LIMIT 1 FOR UPDATE SKIP LOCKED;
        ELSE
          SELECT x.ctid, x.run_at, x.id INTO v_ctid, v_run, v_id FROM :"schema".work x
          WHERE x.pool = p_pool AND x.state = 'pending' AND NOT x.parked AND x.priority = v_prio AND x.key = v_key
            AND x.run_at <= p_now AND (x.run_at, x.id) > (v_after_run, v_after_id)
          ORDER BY x.run_at, x.id LIMIT 1 FOR UPDATE SKIP LOCKED;
        END IF;
        IF v_ctid IS NOT NULL THEN
          rows := rows || v_ctid;
          IF v_key IS NOT NULL THEN
            v_taken := v_taken || v_key;
          END IF;
          v_next_keys := v_next_keys || v_key;
          v_next_runs := v_next_runs || v_run;
          v_next_ids := v_next_ids || v_id;
          v_turn := v_key;
        ELSIF v_walking THEN
          v_misses := v_misses + 1;
        END IF;
      END LOOP;
    END IF;
    v_prio := :"schema".next_priority(p_pool, v_prio);
  END LOOP;
  UPDATE :"schema".pools p SET turn_key = v_turn WHERE p.name = p_pool AND p.turn_key IS DISTINCT FROM v_turn;
  IF cardinality(v_held) > 0 THEN
    SELECT min(s.at) + p_period INTO open_at FROM :"schema".starts s
    WHERE s.pool = p_pool AND s.key = ANY(v_held) AND s.at > p_now - p_period;
  END IF;
END
$$;
