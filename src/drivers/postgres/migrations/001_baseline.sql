-- workpool schema for PostgreSQL. Times are epoch milliseconds (BIGINT).
-- :"schema" is replaced by the store's quoted schema name before this file runs.

-- The values work.kind, work.state and work.oc_state allow. A domain's check is cached per connection and
-- runs only where a column is written; a table CHECK is compiled on every write (8-15 µs per enqueue).
CREATE DOMAIN :"schema".work_kind AS TEXT CHECK (VALUE IN ('action', 'mutation'));
CREATE DOMAIN :"schema".work_state AS TEXT CHECK (VALUE IN ('pending', 'running', 'finished'));
CREATE DOMAIN :"schema".on_complete_state AS TEXT CHECK (VALUE IN ('none', 'pending', 'done', 'failed'));

-- Ids and pool names are compared on every claim, completion and lookup: COLLATE "C" compares bytes
-- instead of going through the database's locale. Ids are ASCII, so their order is JavaScript's.

-- One row per pool: its shared configuration. Claims lock this row (FOR UPDATE), which serializes
-- claims of one pool across every process: the global maxParallelism lock.
CREATE TABLE :"schema".pools (
  name            TEXT COLLATE "C" PRIMARY KEY,
  max_parallelism INTEGER NOT NULL,
  log_level       TEXT NOT NULL
);

-- Cumulative counters for the periodic report, spread over shards (see stats_shard()) and summed on
-- read, so concurrent completion transactions of one pool do not queue on one hot row.
CREATE TABLE :"schema".stats (
  pool      TEXT COLLATE "C" NOT NULL,
  shard     SMALLINT NOT NULL,
  completed BIGINT NOT NULL DEFAULT 0,
  succeeded BIGINT NOT NULL DEFAULT 0,
  failed    BIGINT NOT NULL DEFAULT 0,
  retries   BIGINT NOT NULL DEFAULT 0,
  canceled  BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (pool, shard)
);

-- Maintenance leadership: one lease row per pool.
CREATE TABLE :"schema".leaders (
  pool       TEXT COLLATE "C" PRIMARY KEY,
  worker_id  TEXT NOT NULL,
  expires_at BIGINT NOT NULL
);

-- Every unit of work, from enqueue until retention deletes it.
CREATE TABLE :"schema".work (
  id               TEXT COLLATE "C" PRIMARY KEY,
  pool             TEXT COLLATE "C" NOT NULL,
  kind             :"schema".work_kind NOT NULL,
  fn_name          TEXT NOT NULL,
  name             TEXT,
  args             TEXT NOT NULL,
  state            :"schema".work_state NOT NULL,
  run_at           BIGINT NOT NULL,
  enqueued_at      BIGINT NOT NULL,
  attempt          INTEGER NOT NULL DEFAULT 0,
  retry            TEXT,
  timeout_ms       BIGINT,
  on_complete      TEXT,
  context          TEXT,
  cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
  worker_id        TEXT,
  lease_until      BIGINT,
  started_at       BIGINT,
  result           TEXT,
  finished_at      BIGINT,
  oc_state         :"schema".on_complete_state NOT NULL DEFAULT 'none',
  oc_attempts      INTEGER NOT NULL DEFAULT 0,
  oc_run_at        BIGINT,
  oc_error         TEXT
);

-- Claim: due pending work of a pool in (run_at, id) order; also the next run_at.
CREATE INDEX work_pending ON :"schema".work (pool, run_at, id) WHERE state = 'pending';
-- Running count and lease rescue.
CREATE INDEX work_running ON :"schema".work (pool, lease_until) WHERE state = 'running';
-- Retention cleanup.
CREATE INDEX work_finished ON :"schema".work (pool, finished_at) WHERE state = 'finished';
-- onComplete retries.
CREATE INDEX work_on_complete ON :"schema".work (pool, oc_run_at) WHERE oc_state = 'pending';

-- Each row is updated twice soon after its insert, and claims walk the pending index past the dead
-- entries of claimed work until a vacuum: vacuum after 2 % of the rows changed (default 20 %).
ALTER TABLE :"schema".work SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.05);

-- The stats row this connection adds its counts to: one of 16 per pool, by backend. One SELECT, no
-- SET clause and not declared less volatile than its body: the planner inlines it into its callers.
CREATE FUNCTION :"schema".stats_shard() RETURNS INTEGER
LANGUAGE sql STABLE
AS $$ SELECT pg_backend_pid() % 16 $$;

-- Claims up to p_limit due pending rows of a pool for p_worker, never letting its running count pass
-- max_parallelism, in the caller's transaction; due rows after the key of the caller's last claim
-- (p_after_run_at, p_after_id; NULL: from the head) first. Returns one row: the pool's config, the running
-- count before the claim, the earliest remaining run_at (only when due work ran out) and the claimed rows
-- as a JSON array of arrays (CLAIMED_COLUMNS in rows.ts), or no row when the pool has no config.
-- One statement per step, counts in variables: as one statement of CTEs the planner cannot size the
-- LIMIT and joins over a sequential scan of the table.
-- Generic plans made without sequential scans: a custom plan for the LIMIT costs 5 % of the server's
-- time in a drain, and a plan cached while the table was empty would stay a scan as it grows.
CREATE FUNCTION :"schema".claim(p_pool TEXT, p_worker TEXT, p_now BIGINT, p_lease_until BIGINT, p_limit INTEGER,
                                p_after_run_at BIGINT, p_after_id TEXT)
RETURNS TABLE (max_parallelism INTEGER, log_level TEXT, running_count INTEGER, next_run_at BIGINT, claimed JSON)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  v_max INTEGER;
  v_level TEXT;
  v_running INTEGER;
  v_free INTEGER;
  v_rows TID[];
  v_behind TID[];
  v_claimed JSON;
  v_next BIGINT;
BEGIN
  -- The pool's lock: claims of one pool run one at a time across every process, until the caller's
  -- transaction commits.
  SELECT p.max_parallelism, p.log_level INTO v_max, v_level FROM :"schema".pools p WHERE p.name = p_pool FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  -- Each statement of a VOLATILE function takes a fresh snapshot under READ COMMITTED, so this count
  -- includes every claim committed before the lock was granted. Results commit without the pool lock,
  -- so the count is exact or too high, never too low.
  SELECT count(*)::int INTO v_running FROM :"schema".work w WHERE w.pool = p_pool AND w.state = 'running';
  v_free := greatest(0, least(p_limit, v_max - v_running));
  -- Due rows after the caller's key: the index scan starts there, past the dead entries that claims
  -- leave at the head until a vacuum (walking them cost about 0.2 ms of a 1 ms claim).
  IF v_free > 0 AND p_after_id IS NOT NULL THEN
    SELECT array_agg(s.ctid) INTO v_rows FROM (
      SELECT w.ctid FROM :"schema".work w
      WHERE w.pool = p_pool AND w.state = 'pending' AND w.run_at <= p_now
        AND (w.run_at, w.id) > (p_after_run_at, p_after_id)
      ORDER BY w.run_at, w.id
      LIMIT v_free
      FOR UPDATE SKIP LOCKED) s;
  END IF;
  -- The rest from the head, up to the key (the rows after it are taken or locked). Rows
  -- this transaction locked above are not skipped by SKIP LOCKED, hence the bound.
  IF coalesce(cardinality(v_rows), 0) < v_free THEN
    SELECT array_agg(s.ctid) INTO v_behind FROM (
      SELECT w.ctid FROM :"schema".work w
      WHERE w.pool = p_pool AND w.state = 'pending' AND w.run_at <= p_now
        AND (p_after_id IS NULL OR (w.run_at, w.id) <= (p_after_run_at, p_after_id))
      ORDER BY w.run_at, w.id
      LIMIT v_free - coalesce(cardinality(v_rows), 0)
      FOR UPDATE SKIP LOCKED) s;
    -- array_cat treats a NULL array as empty; both NULL stays NULL (nothing claimed).
    v_rows := v_rows || v_behind;
  END IF;
  IF v_rows IS NOT NULL THEN
    WITH c AS (
      UPDATE :"schema".work w
      SET state = 'running', attempt = w.attempt + 1, worker_id = p_worker, lease_until = p_lease_until, started_at = p_now
      WHERE w.ctid = ANY(v_rows)
      RETURNING w.id, w.kind, w.fn_name, w.name, w.args, w.run_at, w.enqueued_at, w.attempt, w.retry, w.timeout_ms,
                w.on_complete, w.context, w.cancel_requested)
    -- Arrays rather than objects: no key names to build, send and parse. The caller knows the other
    -- columns of a claimed row (its pool, worker, lease and time; no result or delivery yet).
    SELECT json_agg(json_build_array(c.id, c.kind, c.fn_name, c.name, c.args, c.run_at, c.enqueued_at, c.attempt,
                                     c.retry, c.timeout_ms, c.on_complete, c.context, c.cancel_requested))
    INTO v_claimed FROM c;
  END IF;
  -- The earliest remaining run_at, which the caller sleeps until, only when the claim ran out of due
  -- work: a full claim is followed by another anyway. After the update, so the rows just claimed are no
  -- longer pending; ORDER BY ... LIMIT 1 rather than min(), so a plan made on an empty table reads one
  -- index entry.
  IF coalesce(cardinality(v_rows), 0) < v_free THEN
    SELECT w.run_at INTO v_next FROM :"schema".work w WHERE w.pool = p_pool AND w.state = 'pending' ORDER BY w.run_at LIMIT 1;
  END IF;
  RETURN QUERY SELECT v_max, v_level, v_running, v_next, v_claimed;
END
$$;

-- Writes the outcomes of a batch of action attempts, then (when p_limit > 0) claims work for the slots
-- they freed with claim() and the key given: one round trip and one commit per batch.
-- p_outcomes maps each id to [attempt, status, result, run_at]: status 'success' | 'failed' |
-- 'canceled' with the RunResult JSON in result, or 'retrying' with the time it is due in run_at. A row
-- no longer running on that attempt is left alone; a cancel requested meanwhile wins (p_canceled_result).
-- Work with an onComplete handler is marked for delivery by maintenance. Returns one row: the ids not
-- written, those that finished canceled by request, and claim()'s columns (NULL when p_limit = 0).
-- Plan settings as claim()'s.
CREATE FUNCTION :"schema".complete(
  p_pool TEXT, p_outcomes JSONB, p_canceled_result TEXT, p_now BIGINT, p_channel TEXT,
  p_worker TEXT, p_lease_until BIGINT, p_limit INTEGER, p_after_run_at BIGINT, p_after_id TEXT)
RETURNS TABLE (stale TEXT[], canceled TEXT[], max_parallelism INTEGER, log_level TEXT, running_count INTEGER,
               next_run_at BIGINT, claimed JSON)
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
    RETURN QUERY SELECT v_stale, coalesce(v_canceled, '{}'), c.max_parallelism, c.log_level,
                        c.running_count, c.next_run_at, c.claimed
                 FROM (SELECT 1) one
                 LEFT JOIN LATERAL :"schema".claim(p_pool, p_worker, p_now, p_lease_until, p_limit,
                                                   p_after_run_at, p_after_id) c ON TRUE;
  ELSE
    RETURN QUERY SELECT v_stale, coalesce(v_canceled, '{}'), NULL::INTEGER, NULL::TEXT, NULL::INTEGER,
                        NULL::BIGINT, NULL::JSON;
  END IF;
END
$$;

-- Inserts one new work and, when the pool has a free slot and no other due work waits (so it never
-- jumps the queue), claims it for p_worker in the same statement, under the pool's lock like claim().
-- Otherwise it inserts the row pending and notifies, as the insert statements do. Returns whether the
-- row was claimed. Plan settings as claim()'s.
CREATE FUNCTION :"schema".enqueue_claim(
  p_id TEXT, p_pool TEXT, p_kind TEXT, p_fn_name TEXT, p_name TEXT, p_args TEXT, p_run_at BIGINT, p_enqueued_at BIGINT,
  p_retry TEXT, p_timeout_ms BIGINT, p_on_complete TEXT, p_context TEXT, p_channel TEXT,
  p_worker TEXT, p_now BIGINT, p_lease_until BIGINT)
RETURNS BOOLEAN
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  v_max INTEGER;
  v_running INTEGER;
  v_claim BOOLEAN := FALSE;
BEGIN
  IF p_run_at <= p_now THEN
    SELECT p.max_parallelism INTO v_max FROM :"schema".pools p WHERE p.name = p_pool FOR UPDATE;
    IF FOUND THEN
      SELECT count(*)::int INTO v_running FROM :"schema".work w WHERE w.pool = p_pool AND w.state = 'running';
      IF v_running < v_max THEN
        v_claim := NOT EXISTS (SELECT 1 FROM :"schema".work w WHERE w.pool = p_pool AND w.state = 'pending' AND w.run_at <= p_now);
      END IF;
    END IF;
  END IF;
  INSERT INTO :"schema".work (id, pool, kind, fn_name, name, args, state, run_at, enqueued_at, retry, timeout_ms, on_complete,
                              context, attempt, worker_id, lease_until, started_at)
  VALUES (p_id, p_pool, p_kind, p_fn_name, p_name, p_args, CASE WHEN v_claim THEN 'running' ELSE 'pending' END, p_run_at,
          p_enqueued_at, p_retry, p_timeout_ms, p_on_complete, p_context, CASE WHEN v_claim THEN 1 ELSE 0 END,
          CASE WHEN v_claim THEN p_worker END, CASE WHEN v_claim THEN p_lease_until END, CASE WHEN v_claim THEN p_now END);
  IF NOT v_claim THEN
    PERFORM pg_notify(p_channel, p_pool);
  END IF;
  RETURN v_claim;
END
$$;
