-- workpool schema for PostgreSQL, version 5: the functions on the hot path plan their
-- statements once per connection, always on the indexes.
-- :"schema" is replaced by the store's quoted schema name before this file runs.

-- A plpgsql function caches a plan per statement per connection. Under the default
-- plan_cache_mode, the statement that picks due rows (LIMIT v_free) was planned again on
-- every claim: its generic plan, not knowing the limit, looked dearer than a custom one.
-- That planning was about 5 % of the server's time in a drain. The other statements use
-- a generic plan made on their sixth run; made while the table's statistics said it was
-- empty (after a vacuum of a drained table, say), that plan is a sequential scan, kept
-- until something invalidates it: on a table that has since grown to a large backlog,
-- every claim then read the whole table.
-- Each of these functions now uses generic plans only, made with sequential scans
-- priced out, so every statement in them is an index or tuple-id lookup whatever the
-- statistics say. Each reads or writes a few rows found through an index; none is meant
-- to scan the table.
ALTER FUNCTION :"schema".claim(TEXT, TEXT, BIGINT, BIGINT, INTEGER)
  SET plan_cache_mode = force_generic_plan SET enable_seqscan = off;
ALTER FUNCTION :"schema".complete(TEXT, TEXT[], JSONB, TEXT, BIGINT, TEXT, TEXT, BIGINT, INTEGER)
  SET plan_cache_mode = force_generic_plan SET enable_seqscan = off;
ALTER FUNCTION :"schema".enqueue_claim(TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, BIGINT, BIGINT, TEXT, BIGINT, TEXT, TEXT, TEXT,
                                       TEXT, BIGINT, BIGINT)
  SET plan_cache_mode = force_generic_plan SET enable_seqscan = off;
