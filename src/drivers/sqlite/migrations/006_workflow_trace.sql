-- The trace context of a workflow run (JSON, written only when its pool traces): its root span's, from which
-- every advance and step span of the run continues, and the last advance's, which the next advance links to.
ALTER TABLE workpool_workflow_runs ADD COLUMN trace TEXT;
