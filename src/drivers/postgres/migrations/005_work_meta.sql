-- Per-work options read by the runtime and the enqueue's trace context; freed keys noted without waits.

-- JSON object, NULL when the work has none: onCompleteExcludeKinds (result kinds whose onComplete is
-- skipped), logLevel (the work's own log threshold) and trace (the enqueuing span's propagation
-- fields, such as traceparent), so each attempt's span joins the trace that enqueued the work.
ALTER TABLE :"schema".work ADD COLUMN meta TEXT;

-- freed_keys without its primary key. Two transactions ending attempts of the same two keys in opposite
-- orders each waited, in the unique index, for the other's uncommitted note of a key: a deadlock, seen
-- under keyed load with several workers. A plain insert waits for nobody; a claim takes every note of
-- its pool, repeats included.
ALTER TABLE :"schema".freed_keys DROP CONSTRAINT freed_keys_pkey;
CREATE INDEX freed_keys_pool ON :"schema".freed_keys (pool);

CREATE OR REPLACE FUNCTION :"schema".note_freed_key() RETURNS TRIGGER
LANGUAGE plpgsql
AS $$
BEGIN
  INSERT INTO :"schema".freed_keys (pool, key) VALUES (OLD.pool, OLD.key);
  RETURN NULL;
END
$$;

-- unpark_freed() of 002 for keys the caller took from freed_keys (p_keys, distinct): gives back, for each,
-- as many of its parked rows, in claim order, as it has room for under p_limit given p_running. A parked
-- row locked by another transaction is skipped, not waited for (this runs under the pool's lock): its
-- key is noted again for the next claim. claim() below is its only caller; unpark_freed() is no longer
-- called and the next migration drops it.
CREATE FUNCTION :"schema".unpark_keys(p_pool TEXT, p_keys TEXT[], p_limit INTEGER, p_running JSONB)
RETURNS VOID
LANGUAGE plpgsql VOLATILE
AS $$
#variable_conflict use_column
DECLARE
  v_back TEXT[];
BEGIN
  WITH back AS (
    UPDATE :"schema".work w SET parked = FALSE
    WHERE w.ctid = ANY(ARRAY(
      SELECT x.ctid FROM unnest(p_keys) AS f(key)
      CROSS JOIN LATERAL (
        SELECT p.ctid FROM :"schema".work p
        WHERE p.pool = p_pool AND p.key = f.key AND p.state = 'pending' AND p.parked
        ORDER BY p.priority, p.run_at, p.id
        LIMIT greatest(0, p_limit - coalesce((p_running ->> f.key)::INTEGER, 0))
        FOR UPDATE SKIP LOCKED) x))
    RETURNING w.key)
  SELECT array_agg(back.key) INTO v_back FROM back;
  INSERT INTO :"schema".freed_keys (pool, key)
  SELECT p_pool, f.key FROM unnest(p_keys) AS f(key)
  CROSS JOIN LATERAL (
    SELECT 1 FROM :"schema".work p WHERE p.pool = p_pool AND p.key = f.key AND p.state = 'pending' AND p.parked LIMIT 1) e
  WHERE cardinality(array_positions(coalesce(v_back, '{}'), f.key)) < p_limit - coalesce((p_running ->> f.key)::INTEGER, 0);
END
$$;

-- The rows p_rows of the pool moved to running for p_worker, as the JSON claim() answers with; each
-- start recorded in starts when p_record (the pool has a rate limit). Its own function so that a
-- column a worker needs is added here, not in claim().
CREATE FUNCTION :"schema".start_rows(p_pool TEXT, p_worker TEXT, p_now BIGINT, p_lease_until BIGINT, p_rows TID[],
                                     p_record BOOLEAN)
RETURNS JSON
LANGUAGE plpgsql VOLATILE
AS $$
#variable_conflict use_column
DECLARE
  v_claimed JSON;
BEGIN
  WITH c AS (
    UPDATE :"schema".work w
    SET state = 'running', attempt = w.attempt + 1, worker_id = p_worker, lease_until = p_lease_until, started_at = p_now,
        unique_key = NULL
    WHERE w.ctid = ANY(p_rows)
    RETURNING w.id, w.kind, w.fn_name, w.name, w.args, w.run_at, w.enqueued_at, w.attempt, w.retry, w.timeout_ms,
              w.on_complete, w.context, w.cancel_requested, w.priority, w.key, w.meta),
  s AS (
    INSERT INTO :"schema".starts (pool, at, key)
    SELECT p_pool, p_now, c.key FROM c WHERE p_record)
  -- Arrays rather than objects: no key names to build, send and parse. The caller knows the other
  -- columns of a claimed row (its pool, worker, lease and time; no result or delivery yet).
  SELECT json_agg(json_build_array(c.id, c.kind, c.fn_name, c.name, c.args, c.run_at, c.enqueued_at, c.attempt,
                                   c.retry, c.timeout_ms, c.on_complete, c.context, c.cancel_requested, c.priority, c.key, c.meta))
  INTO v_claimed FROM c;
  RETURN v_claimed;
END
$$;

-- claim() as in 004 (same arguments and columns: it replaces 004's in place), starting its rows
-- through start_rows(), and taking the freed keys' notes before it counts their running attempts.
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
  IF v_free > 0 THEN
    IF v_key_rate IS NOT NULL THEN
      SELECT coalesce(jsonb_object_agg(k.key, k.n), '{}') INTO v_started FROM (
        SELECT s.key, count(*) AS n FROM :"schema".starts s
        WHERE s.pool = p_pool AND s.key IS NOT NULL AND s.at > p_now - v_key_period GROUP BY s.key) k;
      SELECT r.rows, r.open_at INTO v_rows, v_key_opens
      FROM :"schema".pick_rated(p_pool, p_now, v_free, v_keys, v_per_key, v_key_rate, v_key_period, v_started) r;
    ELSIF v_keys IS NULL THEN
      v_rows := :"schema".pick_plain(p_pool, p_now, v_free, p_after_priority, p_after_run_at, p_after_id);
    ELSE
      v_rows := :"schema".pick_keyed(p_pool, p_now, v_free, v_keys, v_per_key);
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

-- enqueue_claim() as in 004, with the work's meta. The 004 signature stays for processes of the
-- previous release during a rolling upgrade (they write no meta); the next migration drops it.
CREATE FUNCTION :"schema".enqueue_claim(
  p_id TEXT, p_pool TEXT, p_kind TEXT, p_fn_name TEXT, p_name TEXT, p_args TEXT, p_run_at BIGINT, p_enqueued_at BIGINT,
  p_retry TEXT, p_timeout_ms BIGINT, p_on_complete TEXT, p_context TEXT, p_priority INTEGER, p_key TEXT, p_meta TEXT, p_channel TEXT,
  p_worker TEXT, p_now BIGINT, p_lease_until BIGINT)
RETURNS BOOLEAN
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  v_max INTEGER;
  v_rated BOOLEAN;
  v_keys INTEGER;
  v_running INTEGER;
  v_claim BOOLEAN := FALSE;
BEGIN
  IF p_run_at <= p_now THEN
    SELECT p.max_parallelism, p.key_parallelism, p.rate_limit IS NOT NULL OR p.key_rate_limit IS NOT NULL
    INTO v_max, v_keys, v_rated FROM :"schema".pools p WHERE p.name = p_pool FOR UPDATE;
    -- A rate-limited pool records every start: its work starts through claim() only.
    IF FOUND AND NOT v_rated THEN
      SELECT count(*)::int INTO v_running FROM :"schema".work w WHERE w.pool = p_pool AND w.state = 'running';
      IF v_running < v_max THEN
        v_claim := NOT :"schema".due_exists(p_pool, p_now);
        -- Under a per-key limit: the key has room, and no freed key's parked work waits for its turn.
        IF v_claim AND v_keys IS NOT NULL THEN
          v_claim := NOT EXISTS (SELECT 1 FROM :"schema".freed_keys f WHERE f.pool = p_pool)
            AND (p_key IS NULL OR (SELECT count(*) FROM :"schema".work w
                                   WHERE w.pool = p_pool AND w.state = 'running' AND w.key = p_key) < v_keys);
        END IF;
      END IF;
    END IF;
  END IF;
  INSERT INTO :"schema".work (id, pool, kind, fn_name, name, args, state, run_at, enqueued_at, retry, timeout_ms, on_complete,
                              context, priority, key, meta, attempt, worker_id, lease_until, started_at)
  VALUES (p_id, p_pool, p_kind, p_fn_name, p_name, p_args, CASE WHEN v_claim THEN 'running' ELSE 'pending' END, p_run_at,
          p_enqueued_at, p_retry, p_timeout_ms, p_on_complete, p_context, p_priority, p_key, p_meta, CASE WHEN v_claim THEN 1 ELSE 0 END,
          CASE WHEN v_claim THEN p_worker END, CASE WHEN v_claim THEN p_lease_until END, CASE WHEN v_claim THEN p_now END);
  IF NOT v_claim THEN
    PERFORM pg_notify(p_channel, p_pool);
  END IF;
  RETURN v_claim;
END
$$;
