-- Claims up to p_limit due pending rows of a pool for p_worker in the caller's transaction, lowest priority
-- first, then keys in turn (pick_turns()), then run_at, then id, within max_parallelism, key_parallelism
-- and the pool's rate limits. Returns one row: the pool's config, the running count before the claim,
-- when to claim next (only when due work ran out or a window is full) and the rows start_rows() claimed;
-- no row when the pool has no config.
-- p_after_*: the key of the caller's last claim (see pick_plain(); NULL: from the head).
-- One statement per step, counts in variables: as one statement of CTEs the planner cannot size the LIMIT.
-- Generic plans without sequential scans: a custom plan for the LIMIT costs 5 % of the server's time in a
-- drain, and a plan cached while the table was empty would stay a scan as it grows.
CREATE OR REPLACE FUNCTION :"schema".claim(p_pool TEXT, p_worker TEXT, p_now BIGINT, p_lease_until BIGINT, p_limit INTEGER,
  p_after_priority INTEGER, p_after_run_at BIGINT, p_after_id TEXT)
RETURNS TABLE (max_parallelism INTEGER, log_level TEXT, key_parallelism INTEGER, running_count INTEGER,
               next_run_at BIGINT, claimed JSON)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  v_max INTEGER;
  v_level TEXT;
  v_keys INTEGER;
  v_rate INTEGER;
  v_period BIGINT;
  v_key_rate INTEGER;
  v_key_period BIGINT;
  v_running INTEGER;
  v_per_key JSONB;
  v_started JSONB;
  v_freed TEXT[];
  v_free INTEGER;
  v_rows TID[] := '{}';
  v_claimed JSON;
  v_next BIGINT;
  v_opens BIGINT;
  v_key_opens BIGINT;
BEGIN
  -- The pool's lock: claims of one pool run one at a time across every process, until the caller's
  -- transaction commits.
  SELECT p.max_parallelism, p.log_level, p.key_parallelism, p.rate_limit, p.rate_period_ms, p.key_rate_limit,
         p.key_rate_period_ms
  INTO v_max, v_level, v_keys, v_rate, v_period, v_key_rate, v_key_period
  FROM :"schema".pools p WHERE p.name = p_pool FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  -- Each statement of a VOLATILE function takes a fresh snapshot under READ COMMITTED, so this count
  -- includes every claim committed before the lock was granted. Results commit without the pool lock,
  -- so the count is exact or too high, never too low (too high for a key: the result's transaction
  -- notes the key in freed_keys, and the next claim gives its parked work back).
  SELECT count(*)::int INTO v_running FROM :"schema".work w WHERE w.pool = p_pool AND w.state = 'running';
  v_free := greatest(0, least(p_limit, v_max - v_running));
  IF v_rate IS NOT NULL OR v_key_rate IS NOT NULL THEN
    -- Starts older than the longest window count for nothing any more.
    DELETE FROM :"schema".starts s
    WHERE s.pool = p_pool AND s.at <= p_now - greatest(coalesce(v_period, 0), coalesce(v_key_period, 0));
  END IF;
  IF v_rate IS NOT NULL THEN
    v_free := least(v_free, greatest(0, v_rate - (SELECT count(*)::int FROM :"schema".starts s
                                                   WHERE s.pool = p_pool AND s.at > p_now - v_period)));
  END IF;
  IF v_keys IS NULL THEN
    -- Nothing is parked without a per-key limit: the keys the trigger noted are of no use.
    DELETE FROM :"schema".freed_keys f WHERE f.pool = p_pool;
  ELSE
    -- The notes are taken before the running attempts of each key are counted: an attempt that ended
    -- before they were read is not counted, and one that ends later leaves its note for the next claim.
    -- Counted first, the count could include an attempt whose note is then taken, leave its key no room,
    -- and its parked work would wait for an attempt end that never comes.
    WITH d AS (DELETE FROM :"schema".freed_keys f WHERE f.pool = p_pool RETURNING f.key)
    SELECT array_agg(DISTINCT d.key) INTO v_freed FROM d;
    SELECT coalesce(jsonb_object_agg(k.key, k.n), '{}') INTO v_per_key FROM (
      SELECT w.key, count(*) AS n FROM :"schema".work w
      WHERE w.pool = p_pool AND w.state = 'running' AND w.key IS NOT NULL GROUP BY w.key) k;
    IF v_freed IS NOT NULL THEN
      PERFORM :"schema".unpark_keys(p_pool, v_freed, v_keys, v_per_key);
    END IF;
  END IF;
  -- Work without keys is taken set-based in claim order (no per-key limit applies to it); keys take turns.
  IF v_free > 0 THEN
    v_rows := :"schema".pick_plain(p_pool, p_now, v_free, p_after_priority, p_after_run_at, p_after_id);
    IF v_rows IS NULL THEN
      IF v_key_rate IS NOT NULL THEN
        SELECT coalesce(jsonb_object_agg(k.key, k.n), '{}') INTO v_started FROM (
          SELECT s.key, count(*) AS n FROM :"schema".starts s
          WHERE s.pool = p_pool AND s.key IS NOT NULL AND s.at > p_now - v_key_period GROUP BY s.key) k;
      END IF;
      SELECT r.rows, r.open_at INTO v_rows, v_key_opens
      FROM :"schema".pick_turns(p_pool, p_now, v_free, v_keys, v_per_key, v_key_rate, v_key_period, v_started) r;
    END IF;
  END IF;
  IF cardinality(v_rows) > 0 THEN
    v_claimed := :"schema".start_rows(p_pool, p_worker, p_now, p_lease_until, v_rows, v_rate IS NOT NULL OR v_key_rate IS NOT NULL);
  END IF;
  IF v_rate IS NOT NULL THEN
    v_opens := :"schema".window_opens(p_pool, p_now, v_rate, v_period);
  END IF;
  -- The earliest remaining run_at, which the caller sleeps until, only when the claim ran out of due
  -- work: a full claim is followed by another anyway. After the update, so the rows just claimed are no
  -- longer pending. While the pool's window is full, nothing starts before it opens; while some key's
  -- is, its work waits for it (or for work due later).
  IF v_opens > p_now THEN
    v_next := :"schema".next_run_at(p_pool);
    IF v_next IS NOT NULL THEN
      v_next := greatest(v_next, v_opens);
    END IF;
  ELSIF cardinality(v_rows) < v_free THEN
    IF v_key_opens IS NOT NULL THEN
      v_next := least(:"schema".next_run_after(p_pool, p_now), v_key_opens);
    ELSE
      v_next := :"schema".next_run_at(p_pool);
    END IF;
  END IF;
  RETURN QUERY SELECT v_max, v_level, v_keys, v_running, v_next, v_claimed;
END
$$;
