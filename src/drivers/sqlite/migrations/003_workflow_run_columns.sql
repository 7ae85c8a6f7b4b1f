-- What operators read and act on: the version of the code that started a run, its timeout (a restart
-- sets a new deadline from it without the workflow's definition), and a run list by pool, newest first.
ALTER TABLE workpool_workflow_runs ADD COLUMN version TEXT;
ALTER TABLE workpool_workflow_runs ADD COLUMN timeout_ms INTEGER;
CREATE INDEX workpool_workflow_runs_created ON workpool_workflow_runs (pool, created_at, id);
