-- The stats row this connection adds its counts to: one of 16 per pool, by backend. One SELECT, no
-- SET clause and not declared less volatile than its body: the planner inlines it into its callers.
CREATE OR REPLACE FUNCTION :"schema".stats_shard() RETURNS INTEGER
LANGUAGE sql STABLE
AS $$ SELECT pg_backend_pid() % 16 $$;
