-- Priorities, per-key parallelism and unique keys.
-- No release has shipped the functions this migration replaces, so no process still calls their
-- old signatures: they are dropped here rather than in the next migration.
DROP FUNCTION :"schema".complete(TEXT, JSONB, TEXT, BIGINT, TEXT, TEXT, BIGINT, INTEGER, BIGINT, TEXT);
DROP FUNCTION :"schema".claim(TEXT, TEXT, BIGINT, BIGINT, INTEGER, BIGINT, TEXT);
DROP FUNCTION :"schema".enqueue_claim(TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, BIGINT, BIGINT, TEXT, BIGINT, TEXT, TEXT, TEXT, TEXT,
                                      BIGINT, BIGINT);

-- Most running attempts of one key of the pool; NULL: no per-key limit.
ALTER TABLE :"schema".pools ADD COLUMN key_parallelism INTEGER;

-- priority: claim order among due work, lower first (-1000..1000). key: whose running attempts
-- key_parallelism limits. unique_key: unique among the pool's pending work, cleared when the work starts
-- (so the key is free again). parked: set while pending work is set aside because its key was at its
-- limit when a claim walked past it; it then leaves the claim's index, so the backlog of a key at its
-- limit is walked once, not by every claim.
ALTER TABLE :"schema".work
  ADD COLUMN priority   INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN key        TEXT,
  ADD COLUMN unique_key TEXT,
  ADD COLUMN parked     BOOLEAN NOT NULL DEFAULT FALSE;

-- Claim: due pending work of a pool that is not parked, one priority at a time, each as the range
-- run_at <= now in (run_at, id) order, so work scheduled for later is never walked; also the next run_at.
DROP INDEX :"schema".work_pending;
CREATE INDEX work_ready ON :"schema".work (pool, priority, run_at, id) WHERE state = 'pending' AND NOT parked;
-- Parked work of one key, in claim order: what a claim gives back once the key has room again.
CREATE INDEX work_parked ON :"schema".work (pool, key, priority, run_at, id) WHERE state = 'pending' AND parked;
-- Running attempts per key.
CREATE INDEX work_running_key ON :"schema".work (pool, key) WHERE state = 'running' AND key IS NOT NULL;
-- Unique keys among pending work: two enqueues racing for one key make one work (INSERT ... ON CONFLICT).
CREATE UNIQUE INDEX work_unique_key ON :"schema".work (pool, unique_key) WHERE state = 'pending' AND unique_key IS NOT NULL;

-- Keys whose running attempts ended since the pool's last claim: that claim gives back the parked work
-- each has room for (unpark_freed()). Written by a trigger, so every transition out of running adds its
-- key, whichever statement writes it; its WHEN keeps work without a key from calling it at all.
CREATE TABLE :"schema".freed_keys (
  pool TEXT COLLATE "C" NOT NULL,
  key  TEXT NOT NULL,
  PRIMARY KEY (pool, key)
);

CREATE FUNCTION :"schema".note_freed_key() RETURNS TRIGGER
LANGUAGE plpgsql
AS $$
BEGIN
  INSERT INTO :"schema".freed_keys (pool, key) VALUES (OLD.pool, OLD.key) ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;

CREATE TRIGGER work_key_freed AFTER UPDATE OF state ON :"schema".work
  FOR EACH ROW WHEN (OLD.state = 'running' AND NEW.state <> 'running' AND OLD.key IS NOT NULL)
  EXECUTE FUNCTION :"schema".note_freed_key();

-- The next priority above p_after (NULL: the lowest) that unparked pending work of the pool has, or NULL:
-- one index probe. Two statements, so that p_after bounds the index range instead of filtering it.
CREATE FUNCTION :"schema".next_priority(p_pool TEXT, p_after INTEGER)
RETURNS INTEGER
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
BEGIN
  IF p_after IS NULL THEN
    RETURN (SELECT w.priority FROM :"schema".work w
            WHERE w.pool = p_pool AND w.state = 'pending' AND NOT w.parked ORDER BY w.priority LIMIT 1);
  END IF;
  RETURN (SELECT w.priority FROM :"schema".work w
          WHERE w.pool = p_pool AND w.state = 'pending' AND NOT w.parked AND w.priority > p_after ORDER BY w.priority LIMIT 1);
END
$$;

-- The earliest run_at of the pool's unparked pending work (parked work is due already), or NULL: one
-- probe per priority present, each the head of its range of the index.
CREATE FUNCTION :"schema".next_run_at(p_pool TEXT)
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
    WHERE w.pool = p_pool AND w.state = 'pending' AND NOT w.parked AND w.priority = v_prio ORDER BY w.run_at LIMIT 1;
    v_next := least(v_next, v_at);
    v_prio := :"schema".next_priority(p_pool, v_prio);
  END LOOP;
  RETURN v_next;
END
$$;

-- Whether unparked pending work of the pool is due at p_now: one probe per priority present, each a
-- range of the index (a filter on run_at alone would walk the work scheduled for later).
CREATE FUNCTION :"schema".due_exists(p_pool TEXT, p_now BIGINT)
RETURNS BOOLEAN
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
  v_prio INTEGER := :"schema".next_priority(p_pool, NULL);
BEGIN
  WHILE v_prio IS NOT NULL LOOP
    IF EXISTS (SELECT 1 FROM :"schema".work w WHERE w.pool = p_pool AND w.state = 'pending' AND NOT w.parked
               AND w.priority = v_prio AND w.run_at <= p_now) THEN
      RETURN TRUE;
    END IF;
    v_prio := :"schema".next_priority(p_pool, v_prio);
  END LOOP;
  RETURN FALSE;
END
$$;

-- The due rows a claim takes when the pool has no per-key limit: up to p_free, priority by priority, as
-- one statement per priority, each the index range run_at <= now. Within the priority of the caller's
-- last claim, rows after its key (p_after_*) first, past the dead index entries that claims leave at the
-- head of the range until a vacuum (walking them cost about 0.2 ms of a 1 ms claim), then the rest up to
-- the key (rows this transaction locked are not skipped by SKIP LOCKED: the two parts must not overlap).
-- Lower priorities are looked for first, and only probed when some pending work has one: a pool that
-- uses one priority pays one index probe. The helper functions here carry no SET clauses: each is
-- called only from claim() or enqueue_claim(), whose settings apply to them, and a SET clause costs
-- every call a save and restore of the settings.
CREATE FUNCTION :"schema".pick_plain(p_pool TEXT, p_now BIGINT, p_free INTEGER,
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

-- Gives back parked work of the keys freed since the pool's last claim (freed_keys): for each, as many of
-- its parked rows, in claim order, as it has room for under p_limit given p_running (running attempts per
-- key). A key is parked only at its limit and stays there until one of its attempts ends, which notes it
-- in freed_keys, so no key with room keeps parked work past the next claim. Set-based: one statement for
-- every freed key (a statement per key cost about 30 us each, 3 ms for a claim after 100 results). A
-- parked row locked by another transaction is skipped, not waited for (this runs under the pool's lock):
-- its key is noted again for the next claim.
CREATE FUNCTION :"schema".unpark_freed(p_pool TEXT, p_limit INTEGER, p_running JSONB)
RETURNS VOID
LANGUAGE plpgsql VOLATILE
AS $$
#variable_conflict use_column
DECLARE
  v_freed TEXT[];
  v_back TEXT[];
BEGIN
  WITH d AS (DELETE FROM :"schema".freed_keys f WHERE f.pool = p_pool RETURNING f.key)
  SELECT array_agg(d.key) INTO v_freed FROM d;
  IF v_freed IS NULL THEN
    RETURN;
  END IF;
  WITH back AS (
    UPDATE :"schema".work w SET parked = FALSE
    WHERE w.ctid = ANY(ARRAY(
      SELECT x.ctid FROM unnest(v_freed) AS f(key)
      CROSS JOIN LATERAL (
        SELECT p.ctid FROM :"schema".work p
        WHERE p.pool = p_pool AND p.key = f.key AND p.state = 'pending' AND p.parked
        ORDER BY p.priority, p.run_at, p.id
        LIMIT greatest(0, p_limit - coalesce((p_running ->> f.key)::INTEGER, 0))
        FOR UPDATE SKIP LOCKED) x))
    RETURNING w.key)
  SELECT array_agg(back.key) INTO v_back FROM back;
  -- Keys given back less than their room that still have parked work: some of it was locked. A LATERAL
  -- probe with LIMIT 1 per key, where an EXISTS was planned as one scan of every parked row.
  INSERT INTO :"schema".freed_keys (pool, key)
  SELECT p_pool, f.key FROM unnest(v_freed) AS f(key)
  CROSS JOIN LATERAL (
    SELECT 1 FROM :"schema".work p WHERE p.pool = p_pool AND p.key = f.key AND p.state = 'pending' AND p.parked LIMIT 1) e
  WHERE cardinality(array_positions(coalesce(v_back, '{}'), f.key)) < p_limit - coalesce((p_running ->> f.key)::INTEGER, 0)
  ON CONFLICT DO NOTHING;
END
$$;

-- The due rows a claim takes under a per-key limit: up to p_free, walked in claim order priority by
-- priority, taking a row while its key has room (running attempts in p_running plus rows taken here) and
-- parking it otherwise. Row by row through a cursor, which stops as soon as p_free rows are taken; a
-- pool without a per-key limit takes the set-based pick_plain() instead. Without a LIMIT the planner
-- would read the whole range and sort it (a bitmap scan): sorts and bitmap scans are off, so the cursor
-- walks the index in order and reads only what it needs.
CREATE FUNCTION :"schema".pick_keyed(p_pool TEXT, p_now BIGINT, p_free INTEGER, p_limit INTEGER, p_running JSONB)
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

-- Claims up to p_limit due pending rows of a pool for p_worker in the caller's transaction, lowest
-- priority first, then earliest run_at, then id, never letting the pool's running count pass
-- max_parallelism nor the running attempts of one key pass key_parallelism. Returns one row: the pool's
-- config, the running count before the claim, the earliest remaining run_at (only when due work ran out)
-- and the claimed rows as a JSON array of arrays (CLAIMED_COLUMNS in rows.ts), or no row when the pool
-- has no config. p_after_*: the key of the caller's last claim (see pick_plain(); NULL: from the head).
-- One statement per step, counts in variables: as one statement of CTEs the planner cannot size the
-- LIMIT and joins over a sequential scan of the table.
-- Generic plans made without sequential scans: a custom plan for the LIMIT costs 5 % of the server's
-- time in a drain, and a plan cached while the table was empty would stay a scan as it grows.
CREATE FUNCTION :"schema".claim(p_pool TEXT, p_worker TEXT, p_now BIGINT, p_lease_until BIGINT, p_limit INTEGER,
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
  v_running INTEGER;
  v_per_key JSONB;
  v_free INTEGER;
  v_rows TID[] := '{}';
  v_claimed JSON;
  v_next BIGINT;
BEGIN
  -- The pool's lock: claims of one pool run one at a time across every process, until the caller's
  -- transaction commits.
  SELECT p.max_parallelism, p.log_level, p.key_parallelism INTO v_max, v_level, v_keys
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
  IF v_keys IS NULL THEN
    -- Nothing is parked without a per-key limit: the keys the trigger noted are of no use.
    DELETE FROM :"schema".freed_keys f WHERE f.pool = p_pool;
    IF v_free > 0 THEN
      v_rows := :"schema".pick_plain(p_pool, p_now, v_free, p_after_priority, p_after_run_at, p_after_id);
    END IF;
  ELSE
    SELECT coalesce(jsonb_object_agg(k.key, k.n), '{}') INTO v_per_key FROM (
      SELECT w.key, count(*) AS n FROM :"schema".work w
      WHERE w.pool = p_pool AND w.state = 'running' AND w.key IS NOT NULL GROUP BY w.key) k;
    PERFORM :"schema".unpark_freed(p_pool, v_keys, v_per_key);
    IF v_free > 0 THEN
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
                w.on_complete, w.context, w.cancel_requested, w.priority, w.key)
    -- Arrays rather than objects: no key names to build, send and parse. The caller knows the other
    -- columns of a claimed row (its pool, worker, lease and time; no result or delivery yet).
    SELECT json_agg(json_build_array(c.id, c.kind, c.fn_name, c.name, c.args, c.run_at, c.enqueued_at, c.attempt,
                                     c.retry, c.timeout_ms, c.on_complete, c.context, c.cancel_requested, c.priority, c.key))
    INTO v_claimed FROM c;
  END IF;
  -- The earliest remaining run_at, which the caller sleeps until, only when the claim ran out of due
  -- work: a full claim is followed by another anyway. After the update, so the rows just claimed are no
  -- longer pending.
  IF cardinality(v_rows) < v_free THEN
    v_next := :"schema".next_run_at(p_pool);
  END IF;
  RETURN QUERY SELECT v_max, v_level, v_keys, v_running, v_next, v_claimed;
END
$$;

-- Writes the outcomes of a batch of action attempts, then (when p_limit > 0) claims work for the slots
-- they freed with claim() and the key given: one round trip and one commit per batch.
-- p_outcomes maps each id to [attempt, status, result, run_at]: status 'success' | 'failed' |
-- 'canceled' with the RunResult JSON in result, or 'retrying' with the time it is due in run_at. A row
-- no longer running on that attempt is left alone; a cancel requested meanwhile wins (p_canceled_result).
-- Work with an onComplete handler is marked for delivery by maintenance. Returns one row: the ids not
-- written, those that finished canceled by request, and claim()'s columns (NULL when p_limit = 0).
-- Keyed work leaving running notes its key for the claim (trigger work_key_freed). Plan settings as claim()'s.
CREATE FUNCTION :"schema".complete(
  p_pool TEXT, p_outcomes JSONB, p_canceled_result TEXT, p_now BIGINT, p_channel TEXT,
  p_worker TEXT, p_lease_until BIGINT, p_limit INTEGER, p_after_priority INTEGER, p_after_run_at BIGINT, p_after_id TEXT)
RETURNS TABLE (stale TEXT[], canceled TEXT[], max_parallelism INTEGER, log_level TEXT, key_parallelism INTEGER,
               running_count INTEGER, next_run_at BIGINT, claimed JSON)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  v_ids TEXT[] := ARRAY(SELECT jsonb_object_keys(p_outcomes));
  v_rows TID[];
  v_applied TEXT[];
  v_stale TEXT[];
  v_canceled TEXT[];
  v_succeeded INTEGER;
  v_failed INTEGER;
  v_canceled_n INTEGER;
  v_retries INTEGER;
BEGIN
  -- Lock in id order, as every multi-row writer of running work does, so two transactions locking
  -- overlapping sets cannot deadlock. The locked rows' tuple ids then drive the update (a TID scan).
  SELECT array_agg(s.ctid) INTO v_rows FROM (
    SELECT w.ctid FROM :"schema".work w WHERE w.id = ANY(v_ids) AND w.pool = p_pool ORDER BY w.id FOR UPDATE) s;
  -- Each row's outcome is a lookup in p_outcomes (a binary search in a JSONB object).
  WITH upd AS (
    UPDATE :"schema".work w SET
      state = CASE WHEN w.cancel_requested OR p_outcomes -> w.id ->> 1 <> 'retrying' THEN 'finished' ELSE 'pending' END,
      result = CASE WHEN w.cancel_requested THEN p_canceled_result ELSE p_outcomes -> w.id ->> 2 END,
      finished_at = CASE WHEN w.cancel_requested OR p_outcomes -> w.id ->> 1 <> 'retrying' THEN p_now END,
      run_at = CASE WHEN w.cancel_requested OR p_outcomes -> w.id ->> 1 <> 'retrying' THEN w.run_at
                    ELSE (p_outcomes -> w.id ->> 3)::BIGINT END,
      oc_state = CASE WHEN w.on_complete IS NULL OR (p_outcomes -> w.id ->> 1 = 'retrying' AND NOT w.cancel_requested)
                      THEN 'none' ELSE 'pending' END,
      oc_run_at = CASE WHEN w.on_complete IS NULL OR (p_outcomes -> w.id ->> 1 = 'retrying' AND NOT w.cancel_requested)
                       THEN NULL ELSE p_now END,
      worker_id = NULL,
      lease_until = NULL
    WHERE w.ctid = ANY(v_rows) AND w.state = 'running' AND w.attempt = (p_outcomes -> w.id ->> 0)::INTEGER
    RETURNING w.id, CASE WHEN w.cancel_requested THEN 'canceled' ELSE p_outcomes -> w.id ->> 1 END AS status
  )
  SELECT array_agg(upd.id), array_agg(upd.id) FILTER (WHERE upd.status = 'canceled'),
         count(*) FILTER (WHERE upd.status = 'success'), count(*) FILTER (WHERE upd.status = 'failed'),
         count(*) FILTER (WHERE upd.status = 'canceled'), count(*) FILTER (WHERE upd.status = 'retrying')
  INTO v_applied, v_canceled, v_succeeded, v_failed, v_canceled_n, v_retries
  FROM upd;
  IF v_applied IS NOT NULL THEN
    INSERT INTO :"schema".stats AS t (pool, shard, completed, succeeded, failed, retries, canceled)
    VALUES (p_pool, :"schema".stats_shard(), cardinality(v_applied), v_succeeded, v_failed, v_retries, v_canceled_n)
    ON CONFLICT (pool, shard) DO UPDATE SET
      completed = t.completed + excluded.completed, succeeded = t.succeeded + excluded.succeeded,
      failed = t.failed + excluded.failed, retries = t.retries + excluded.retries, canceled = t.canceled + excluded.canceled;
  END IF;
  -- Work going back to pending: other workers may need to re-arm their timers.
  IF v_retries > 0 THEN
    PERFORM pg_notify(p_channel, p_pool);
  END IF;
  -- The ids not written, in the order given (few or none: a linear scan is enough).
  v_stale := ARRAY(SELECT i FROM unnest(v_ids) i WHERE i <> ALL(coalesce(v_applied, '{}')));
  IF p_limit > 0 THEN
    -- A LEFT JOIN: should the pool's config be gone, the ids not written still come back.
    RETURN QUERY SELECT v_stale, coalesce(v_canceled, '{}'), c.max_parallelism, c.log_level, c.key_parallelism,
                        c.running_count, c.next_run_at, c.claimed
                 FROM (SELECT 1) one
                 LEFT JOIN LATERAL :"schema".claim(p_pool, p_worker, p_now, p_lease_until, p_limit,
                                                   p_after_priority, p_after_run_at, p_after_id) c ON TRUE;
  ELSE
    RETURN QUERY SELECT v_stale, coalesce(v_canceled, '{}'), NULL::INTEGER, NULL::TEXT, NULL::INTEGER, NULL::INTEGER,
                        NULL::BIGINT, NULL::JSON;
  END IF;
END
$$;

-- Inserts one new work and, when the pool has a free slot, its key (if any) is under the pool's per-key
-- limit and no other due work waits (so it never jumps the queue, whatever its priority), claims it for
-- p_worker in the same statement, under the pool's lock like claim(). Otherwise it inserts the row
-- pending and notifies, as the insert statements do. Returns whether the row was claimed. A row with a
-- unique key never comes here. Plan settings as claim()'s.
CREATE FUNCTION :"schema".enqueue_claim(
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
  v_keys INTEGER;
  v_running INTEGER;
  v_claim BOOLEAN := FALSE;
BEGIN
  IF p_run_at <= p_now THEN
    SELECT p.max_parallelism, p.key_parallelism INTO v_max, v_keys FROM :"schema".pools p WHERE p.name = p_pool FOR UPDATE;
    IF FOUND THEN
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
