/**
 * Workflow versions on SQLite (see driver/workflow-version-ops.ts): parked runs and the
 * heartbeat rows of the workflows live processes define. Each operation is one or two
 * synchronous statements on the connection it is given.
 */
import type { Database } from "better-sqlite3";
import type { VersionGroup, WorkflowVersionOps } from "../../driver/workflow-version-ops.js";
import { prepared } from "./statements.js";

const UNFINISHED = "('running', 'canceling', 'blocked')";

/** The statements of workflow versions. */
export const WORKFLOW_VERSION_SQL = {
  park: `UPDATE workpool_workflow_runs SET parked_at = ?
    WHERE id = ? AND generation = ? AND state IN ('running', 'canceling')`,
  parked: `SELECT id FROM workpool_workflow_runs WHERE pool = ? AND name = ? AND version = ? AND parked_at IS NOT NULL LIMIT ?`,
  unpark: `UPDATE workpool_workflow_runs SET parked_at = NULL WHERE id = ? AND parked_at IS NOT NULL RETURNING state`,
  beat: `INSERT INTO workpool_workflow_live (pool, worker_id, name, version, pinned, heartbeat_at, expires_at)
    VALUES (@pool, @worker_id, @name, @version, @pinned, @now, @expires_at)
    ON CONFLICT (pool, worker_id, name) DO UPDATE SET version = excluded.version, pinned = excluded.pinned,
      heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at`,
  prune: `DELETE FROM workpool_workflow_live WHERE pool = ? AND expires_at <= ?`,
  drop: `DELETE FROM workpool_workflow_live WHERE pool = ? AND worker_id = ?`,
  live: `SELECT pool, name, version, max(pinned) AS pinned, count(*) AS count FROM workpool_workflow_live
    WHERE expires_at > @now AND (@pool IS NULL OR pool = @pool) GROUP BY pool, name, version`,
  unfinished: `SELECT pool, name, version, max(pinned) AS pinned, count(*) AS count FROM workpool_workflow_runs
    WHERE state IN ${UNFINISHED} AND (@pool IS NULL OR pool = @pool) GROUP BY pool, name, version`,
} as const;

interface SqliteGroup {
  pool: string;
  name: string;
  version: string | null;
  pinned: number;
  count: number;
}

const toGroup = (g: SqliteGroup): VersionGroup => ({ ...g, pinned: g.pinned === 1 });

/** The version operations on `db`, which the caller holds. */
export function sqliteWorkflowVersionOps(db: Database): WorkflowVersionOps {
  const s = prepared(db, WORKFLOW_VERSION_SQL);
  return {
    parkRun: (id, generation, now) => s.park.run(now, id, generation).changes > 0,
    parkedRuns: (pool, name, version, limit) => (s.parked.all(pool, name, version, limit) as { id: string }[]).map((r) => r.id),
    unparkRun: (id) => {
      const r = s.unpark.get(id) as { state: string } | undefined;
      return r?.state === "running" || r?.state === "canceling";
    },
    beatLive: (pool, workerId, defs, now, expiresAt) => {
      for (const d of defs) {
        s.beat.run({ pool, worker_id: workerId, name: d.name, version: d.version, pinned: d.pinned ? 1 : 0, now, expires_at: expiresAt });
      }
    },
    pruneLive: (pool, before) => s.prune.run(pool, before).changes,
    dropLive: (pool, workerId) => void s.drop.run(pool, workerId),
    liveVersions: (pool, now) => (s.live.all({ pool, now }) as SqliteGroup[]).map(toGroup),
    unfinishedVersions: (pool) => (s.unfinished.all({ pool }) as SqliteGroup[]).map(toGroup),
  };
}

/** The version operations that only read. */
export const VERSION_READS = ["parkedRuns", "liveVersions", "unfinishedVersions"] as const;
