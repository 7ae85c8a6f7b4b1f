-- The version of the code that started a workflow run (define()'s `version` option); NULL when it had none.
ALTER TABLE workpool_workflow_runs ADD COLUMN version TEXT;
