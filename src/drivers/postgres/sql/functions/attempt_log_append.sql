-- p_log with p_entry appended, keeping the last 10; p_log itself when p_entry is NULL. One SELECT,
-- IMMUTABLE: the planner inlines it where the entry argument is cheap to repeat (a column or a cast);
-- otherwise each call runs as a query of its own, so complete() calls it only for an entry.
CREATE OR REPLACE FUNCTION :"schema".attempt_log_append(p_log JSONB, p_entry JSONB) RETURNS JSONB
LANGUAGE sql IMMUTABLE
AS $$
  SELECT CASE
    WHEN p_entry IS NULL THEN p_log
    WHEN jsonb_array_length(coalesce(p_log, '[]')) >= 10 THEN (p_log - 0) || jsonb_build_array(p_entry)
    ELSE coalesce(p_log, '[]') || jsonb_build_array(p_entry)
  END
$$;
