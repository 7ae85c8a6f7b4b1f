-- Cron schedules and rate limits.

-- Rate limits of the pool: at most rate_limit attempts start in any window of rate_period_ms, and at
-- most key_rate_limit attempts of one key in any window of key_rate_period_ms. NULL: no limit.
ALTER TABLE :"schema".pools
  ADD COLUMN rate_limit         INTEGER,
  ADD COLUMN rate_period_ms     BIGINT,
  ADD COLUMN key_rate_limit     INTEGER,
  ADD COLUMN key_rate_period_ms BIGINT;

-- The attempt starts of a rate-limited pool within its longest window (older ones are pruned by the
-- claim): the claim counts them to keep each window at its limit. Written only while a limit is set.
CREATE TABLE :"schema".starts (
  pool TEXT COLLATE "C" NOT NULL,
  at   BIGINT NOT NULL,
  key  TEXT
);
CREATE INDEX starts_at ON :"schema".starts (pool, at);
CREATE INDEX starts_key ON :"schema".starts (pool, key, at) WHERE key IS NOT NULL;

-- Cron schedules: each tick's work is enqueued by the statement that advances next_run_at from the
-- value its process read (a compare-and-set in the statement that inserts the work), so each tick is
-- enqueued once. revision changes with every schedule() call, so a tick computed from an older
-- definition is refused.
CREATE TABLE :"schema".schedules (
  pool         TEXT COLLATE "C" NOT NULL,
  id           TEXT COLLATE "C" NOT NULL,
  cron         TEXT NOT NULL,
  timezone     TEXT NOT NULL,
  catch_up     TEXT NOT NULL CHECK (catch_up IN ('latest', 'none')),
  kind         :"schema".work_kind NOT NULL,
  fn_name      TEXT NOT NULL,
  args         TEXT NOT NULL,
  -- JSON of the enqueue options each tick's work gets (retry, timeoutMs, priority, key, name,
  -- onComplete, context).
  options      TEXT NOT NULL,
  next_run_at  BIGINT NOT NULL,
  last_tick    BIGINT,
  last_work_id TEXT,
  revision     INTEGER NOT NULL DEFAULT 1,
  created_at   BIGINT NOT NULL,
  updated_at   BIGINT NOT NULL,
  PRIMARY KEY (pool, id)
);
CREATE INDEX schedules_due ON :"schema".schedules (pool, next_run_at);

-- The earliest run_at after p_now of the pool's unparked pending work, or NULL: one probe per priority.
-- What a claim held back by a per-key rate limit sleeps until, unless a key's window opens first.
CREATE FUNCTION :"schema".next_run_after(p_pool TEXT, p_now BIGINT)
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

-- The due rows a claim takes under a per-key rate limit: as pick_keyed(), walking due work in claim
-- order and taking a row while its key has room, where room is also the key's starts in its window
-- (p_started, plus rows taken here) under p_rate. A row whose key is at its per-key parallelism
-- (p_limit, NULL: none) is parked as pick_keyed() parks it; a row whose key is at its rate limit is
-- only passed over (its window opens with time, not with a freed slot). open_at: when the first window
-- of a passed-over key lets a start in, or NULL.
CREATE FUNCTION :"schema".pick_rated(p_pool TEXT, p_now BIGINT, p_free INTEGER, p_limit INTEGER, p_running JSONB,
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

-- When the window of p_period ending at p_now lets one more of p_limit starts in, given the starts
-- recorded in it (the claim's own included): p_now while it has room, else the time the oldest start
-- that keeps it full leaves the window.
CREATE FUNCTION :"schema".window_opens(p_pool TEXT, p_now BIGINT, p_limit INTEGER, p_period BIGINT)
RETURNS BIGINT
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
  v_n INTEGER;
  v_at BIGINT;
BEGIN
  SELECT count(*)::int INTO v_n FROM :"schema".starts s WHERE s.pool = p_pool AND s.at > p_now - p_period;
  IF v_n < p_limit THEN
    RETURN p_now;
  END IF;
  SELECT s.at INTO v_at FROM :"schema".starts s WHERE s.pool = p_pool AND s.at > p_now - p_period
  ORDER BY s.at OFFSET v_n - p_limit LIMIT 1;
  RETURN v_at + p_period;
END
$$;

-- claim() as in 002 (same arguments and columns: it replaces 002's in place), with the pool's rate
-- limits: the free slots are at most the starts the pool's window has room for; under a per-key rate
-- limit the rows are picked by pick_rated(); every start is recorded in starts. When a rate limit held
-- work back, next_run_at is when a window lets the next start in (never earlier than due work), so the
-- caller sleeps until then instead of polling.
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
    SELECT coalesce(jsonb_object_agg(k.key, k.n), '{}') INTO v_per_key FROM (
      SELECT w.key, count(*) AS n FROM :"schema".work w
      WHERE w.pool = p_pool AND w.state = 'running' AND w.key IS NOT NULL GROUP BY w.key) k;
    PERFORM :"schema".unpark_freed(p_pool, v_keys, v_per_key);
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
    WITH c AS (
      UPDATE :"schema".work w
      SET state = 'running', attempt = w.attempt + 1, worker_id = p_worker, lease_until = p_lease_until, started_at = p_now,
          unique_key = NULL
      WHERE w.ctid = ANY(v_rows)
      RETURNING w.id, w.kind, w.fn_name, w.name, w.args, w.run_at, w.enqueued_at, w.attempt, w.retry, w.timeout_ms,
                w.on_complete, w.context, w.cancel_requested, w.priority, w.key),
    s AS (
      INSERT INTO :"schema".starts (pool, at, key)
      SELECT p_pool, p_now, c.key FROM c WHERE v_rate IS NOT NULL OR v_key_rate IS NOT NULL)
    -- Arrays rather than objects: no key names to build, send and parse. The caller knows the other
    -- columns of a claimed row (its pool, worker, lease and time; no result or delivery yet).
    SELECT json_agg(json_build_array(c.id, c.kind, c.fn_name, c.name, c.args, c.run_at, c.enqueued_at, c.attempt,
                                     c.retry, c.timeout_ms, c.on_complete, c.context, c.cancel_requested, c.priority, c.key))
    INTO v_claimed FROM c;
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

-- enqueue_claim() as in 002 (same arguments: it replaces 002's in place), never claiming for a
-- rate-limited pool, whose starts claim() counts and records.
CREATE OR REPLACE FUNCTION :"schema".enqueue_claim(
  p_id TEXT, p_pool TEXT, p_kind TEXT, p_fn_name TEXT, p_name TEXT, p_args TEXT, p_run_at BIGINT, p_enqueued_at BIGINT,
  p_retry TEXT, p_timeout_ms BIGINT, p_on_complete TEXT, p_context TEXT, p_priority INTEGER, p_key TEXT, p_channel TEXT,
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
                              context, priority, key, attempt, worker_id, lease_until, started_at)
  VALUES (p_id, p_pool, p_kind, p_fn_name, p_name, p_args, CASE WHEN v_claim THEN 'running' ELSE 'pending' END, p_run_at,
          p_enqueued_at, p_retry, p_timeout_ms, p_on_complete, p_context, p_priority, p_key, CASE WHEN v_claim THEN 1 ELSE 0 END,
          CASE WHEN v_claim THEN p_worker END, CASE WHEN v_claim THEN p_lease_until END, CASE WHEN v_claim THEN p_now END);
  IF NOT v_claim THEN
    PERFORM pg_notify(p_channel, p_pool);
  END IF;
  RETURN v_claim;
END
$$;
