-- Changing workflow code while runs are in flight: runs pinned to the version that started them, the
-- journal's patch markers, and the (workflow, version) pairs each live process defines.

-- pinned: only a process that defines the run's version runs its function. parked_at: set when an advance
-- landed in a process without that version; a process with it picks the run up (versions.ts).
ALTER TABLE :"schema".workflow_runs ADD COLUMN pinned BOOLEAN NOT NULL DEFAULT false, ADD COLUMN parked_at BIGINT;
CREATE INDEX workflow_runs_parked ON :"schema".workflow_runs (pool, name, version) WHERE parked_at IS NOT NULL;

-- The journal takes a new kind, 'patch' (a step.patched() marker).
ALTER TABLE :"schema".workflow_steps DROP CONSTRAINT workflow_steps_kind_check,
  ADD CONSTRAINT workflow_steps_kind_check CHECK (kind IN ('action', 'mutation', 'sleep', 'event', 'workflow', 'value', 'patch'));

-- The workflows each started pool instance defines, one row per (instance, workflow), kept fresh by its
-- heartbeat; a row past expires_at is a process that is gone.
CREATE TABLE :"schema".workflow_live (
  pool         TEXT COLLATE "C" NOT NULL,
  worker_id    TEXT COLLATE "C" NOT NULL,
  name         TEXT NOT NULL,
  version      TEXT,
  pinned       BOOLEAN NOT NULL,
  heartbeat_at BIGINT NOT NULL,
  expires_at   BIGINT NOT NULL,
  PRIMARY KEY (pool, worker_id, name)
);
