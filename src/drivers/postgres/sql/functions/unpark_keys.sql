-- Gives back, for each key the claim took from freed_keys (p_keys, distinct), as many of its parked rows,
-- in claim order, as it has room for under p_limit given p_running: one statement for every key. A parked
-- row locked by another transaction is skipped, not waited for (this runs under the pool's lock): its key
-- is noted again for the next claim.
CREATE OR REPLACE FUNCTION :"schema".unpark_keys(p_pool TEXT, p_keys TEXT[], p_limit INTEGER, p_running JSONB)
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
