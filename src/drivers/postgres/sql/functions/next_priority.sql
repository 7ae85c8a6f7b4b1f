-- The next priority above p_after (NULL: the lowest) that unparked pending work of the pool has, or NULL:
-- one index probe. Two statements, so that p_after bounds the index range instead of filtering it.
CREATE OR REPLACE FUNCTION :"schema".next_priority(p_pool TEXT, p_after INTEGER)
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
