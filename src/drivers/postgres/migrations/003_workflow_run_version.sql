-- The version of the code that started a workflow run (define()'s `version` option); NULL when it had none.
ALTER TABLE :"schema".workflow_runs ADD COLUMN version TEXT;
