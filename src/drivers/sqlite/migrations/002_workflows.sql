-- Durable workflows (workpool/workflow): a run, its journal of steps in call order, and the events sent to it.

-- One run of a workflow. generation fences its writers: an advance commits only if the run still has
-- the generation it read, so two processes driving one run never both write.
CREATE TABLE workpool_workflow_runs (
  id            TEXT NOT NULL PRIMARY KEY,
  pool          TEXT NOT NULL,
  name          TEXT NOT NULL,
  args          TEXT NOT NULL,
  state         TEXT NOT NULL CHECK (state IN ('running', 'canceling', 'blocked', 'success', 'failed', 'canceled')),
  generation    INTEGER NOT NULL DEFAULT 0,
  -- JSON of the run's result once finished: {kind: "success", returnValue} | {kind: "failed", error} | {kind: "canceled"}.
  result        TEXT,
  -- JSON of the mismatch that blocked the run: {n, expected, recorded}.
  blocked       TEXT,
  -- Why a canceling run is ending: 'canceled' (cancel()) or 'timeout' (its timeoutMs passed).
  cancel_reason TEXT,
  on_complete   TEXT,
  context       TEXT,
  -- Delivery of on_complete: none (no handler), pending (due at oc_run_at), done, failed.
  oc_state      TEXT NOT NULL DEFAULT 'none',
  oc_attempts   INTEGER NOT NULL DEFAULT 0,
  oc_error      TEXT,
  parent_id     TEXT,
  parent_step   INTEGER,
  steps         INTEGER NOT NULL DEFAULT 0,
  journal_bytes INTEGER NOT NULL DEFAULT 0,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  finished_at   INTEGER,
  deadline      INTEGER
) WITHOUT ROWID;
CREATE INDEX workpool_workflow_runs_pool ON workpool_workflow_runs (pool, state, id);
CREATE INDEX workpool_workflow_runs_parent ON workpool_workflow_runs (parent_id) WHERE parent_id IS NOT NULL;
-- Retention: a pool's finished runs, oldest first.
CREATE INDEX workpool_workflow_runs_finished ON workpool_workflow_runs (pool, finished_at) WHERE finished_at IS NOT NULL;

-- The journal: step n of a run, in the order the handler called its steps. outcome is JSON once the
-- step ended: {kind: "success", value} | {kind: "failed", error, data?} | {kind: "canceled"} |
-- {kind: "event", value} | {kind: "timeout"}. delivered is the generation whose advance gave the
-- outcome to the handler: replay gives outcomes back in the same rounds, so races replay as they ran.
CREATE TABLE workpool_workflow_steps (
  run_id      TEXT NOT NULL,
  n           INTEGER NOT NULL,
  kind        TEXT NOT NULL CHECK (kind IN ('action', 'mutation', 'sleep', 'event', 'workflow', 'value')),
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

-- Events sent to a run, in the order sent; each is consumed by one awaitEvent (consumed_step).
CREATE TABLE workpool_workflow_events (
  run_id        TEXT NOT NULL,
  seq           INTEGER NOT NULL,
  name          TEXT NOT NULL,
  payload       TEXT NOT NULL,
  sent_at       INTEGER NOT NULL,
  consumed_step INTEGER,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
