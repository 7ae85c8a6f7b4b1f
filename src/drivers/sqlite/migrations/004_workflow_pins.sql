-- Changing workflow code while runs are in flight: runs pinned to the version that started them, the
-- journal's patch markers, and the (workflow, version) pairs each live process defines.

-- pinned: only a process that defines the run's version runs its function. parked_at: set when an advance
-- landed in a process without that version; a process with it picks the run up (versions.ts).
ALTER TABLE workpool_workflow_runs ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workpool_workflow_runs ADD COLUMN parked_at INTEGER;
CREATE INDEX workpool_workflow_runs_parked ON workpool_workflow_runs (pool, name, version) WHERE parked_at IS NOT NULL;

-- The journal takes a new kind, 'patch' (a step.patched() marker): SQLite changes a CHECK by rebuilding the table.
CREATE TABLE workpool_workflow_steps_next (
  run_id      TEXT NOT NULL,
  n           INTEGER NOT NULL,
  kind        TEXT NOT NULL CHECK (kind IN ('action', 'mutation', 'sleep', 'event', 'workflow', 'value', 'patch')),
  name        TEXT NOT NULL,
  state       TEXT NOT NULL CHECK (state IN ('running', 'waiting', 'done', 'failed', 'canceled')),
  args        TEXT,
  outcome     TEXT,
  work_id     TEXT,
  child_id    TEXT,
  delivered   INTEGER,
  started_at  INTEGER NOT NULL,
  finished_at INTEGER,
  PRIMARY KEY (run_id, n)
) WITHOUT ROWID;
INSERT INTO workpool_workflow_steps_next (run_id, n, kind, name, state, args, outcome, work_id, child_id, delivered, started_at, finished_at)
  SELECT run_id, n, kind, name, state, args, outcome, work_id, child_id, delivered, started_at, finished_at FROM workpool_workflow_steps;
DROP TABLE workpool_workflow_steps;
ALTER TABLE workpool_workflow_steps_next RENAME TO workpool_workflow_steps;

-- The workflows each started pool instance defines, one row per (instance, workflow), kept fresh by its
-- heartbeat; a row past expires_at is a process that is gone.
CREATE TABLE workpool_workflow_live (
  pool         TEXT NOT NULL,
  worker_id    TEXT NOT NULL,
  name         TEXT NOT NULL,
  version      TEXT,
  pinned       INTEGER NOT NULL,
  heartbeat_at INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  PRIMARY KEY (pool, worker_id, name)
) WITHOUT ROWID;
