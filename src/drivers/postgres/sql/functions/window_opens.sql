-- When the window of p_period ending at p_now lets one more of p_limit starts in, given the starts
-- recorded in it (the claim's own included): p_now while it has room, else the time the oldest start
-- that keeps it full leaves the window.
CREATE OR REPLACE FUNCTION :"schema".window_opens(p_pool TEXT, p_now BIGINT, p_limit INTEGER, p_period BIGINT)
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
