-- workpool schema for PostgreSQL, version 6: the allowed values of kind, state and
-- oc_state are checked by domains instead of table CHECK constraints.
-- :"schema" is replaced by the store's quoted schema name before this file runs.

-- A table's CHECK constraints are read back from their stored text (parsed) and compiled
-- on every execution of every INSERT and UPDATE of the table, whichever columns it
-- sets: for a single-row enqueue that was about 8-15 µs of server time per commit. A
-- domain's check is parsed once per connection (PostgreSQL caches it with the type), and
-- runs only where a statement writes the column. The values allowed are unchanged.
CREATE DOMAIN :"schema".work_kind AS TEXT CHECK (VALUE IN ('action', 'mutation'));
CREATE DOMAIN :"schema".work_state AS TEXT CHECK (VALUE IN ('pending', 'running', 'finished'));
CREATE DOMAIN :"schema".on_complete_state AS TEXT CHECK (VALUE IN ('none', 'pending', 'done', 'failed'));

-- Rewrites the table and rebuilds its indexes once; clients still see TEXT columns
-- (PostgreSQL describes a domain's values by its base type).
ALTER TABLE :"schema".work
  DROP CONSTRAINT work_kind_check,
  DROP CONSTRAINT work_state_check,
  DROP CONSTRAINT work_oc_state_check,
  ALTER COLUMN kind TYPE :"schema".work_kind,
  ALTER COLUMN state TYPE :"schema".work_state,
  ALTER COLUMN oc_state TYPE :"schema".on_complete_state;
