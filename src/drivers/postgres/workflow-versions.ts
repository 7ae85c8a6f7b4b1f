/**
 * Workflow versions on PostgreSQL (see driver/workflow-version-ops.ts): parked runs and the
 * heartbeat rows of the workflows live processes define, one named statement per operation.
 */
import type { VersionGroup, WorkflowVersionOps } from "../../driver/workflow-version-ops.js";
import { run, type Queryable } from "./connection.js";
import { statementsOf } from "./statements.js";

/** The statements of workflow versions. */
export function workflowVersionSql(s: string) {
  const runs = `${s}.workflow_runs`;
  const live = `${s}.workflow_live`;
  return {
    park: `UPDATE ${runs} SET parked_at = $3 WHERE id = $1 AND generation = $2 AND state IN ('running', 'canceling')`,
    parked: `SELECT id FROM ${runs} WHERE pool = $1 AND name = $2 AND version = $3 AND parked_at IS NOT NULL LIMIT $4`,
    unpark: `UPDATE ${runs} SET parked_at = NULL WHERE id = $1 AND parked_at IS NOT NULL RETURNING state`,
    beat: `INSERT INTO ${live} (pool, worker_id, name, version, pinned, heartbeat_at, expires_at)
      SELECT $1, $2, name, version, pinned, $6, $7 FROM unnest($3::text[], $4::text[], $5::boolean[]) AS d(name, version, pinned)
      ON CONFLICT (pool, worker_id, name) DO UPDATE SET version = excluded.version, pinned = excluded.pinned,
        heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at`,
    prune: `DELETE FROM ${live} WHERE pool = $1 AND expires_at <= $2`,
    drop: `DELETE FROM ${live} WHERE pool = $1 AND worker_id = $2`,
    live: `SELECT pool, name, version, bool_or(pinned) AS pinned, count(*)::integer AS count FROM ${live}
      WHERE expires_at > $2 AND ($1::text IS NULL OR pool = $1) GROUP BY pool, name, version`,
    unfinished: `SELECT pool, name, version, bool_or(pinned) AS pinned, count(*)::integer AS count FROM ${runs}
      WHERE state IN ('running', 'canceling', 'blocked') AND ($1::text IS NULL OR pool = $1) GROUP BY pool, name, version`,
  };
}

/** The version operations of the store in `schema`, on `db`. */
export function pgWorkflowVersionOps(db: Queryable, schema: string): WorkflowVersionOps {
  const s = statementsOf(schema, workflowVersionSql);
  return {
    parkRun: async (id, generation, now) => (await run(db, s.park, [id, generation, now])).rowCount > 0,
    parkedRuns: async (pool, name, version, limit) =>
      (await run<{ id: string }>(db, s.parked, [pool, name, version, limit])).rows.map((r) => r.id),
    unparkRun: async (id) => {
      const state = (await run<{ state: string }>(db, s.unpark, [id])).rows[0]?.state;
      return state === "running" || state === "canceling";
    },
    beatLive: async (pool, workerId, defs, now, expiresAt) => {
      if (!defs.length) return;
      const names = defs.map((d) => d.name);
      const versions = defs.map((d) => d.version);
      const pins = defs.map((d) => d.pinned);
      await run(db, s.beat, [pool, workerId, names, versions, pins, now, expiresAt]);
    },
    pruneLive: async (pool, before) => (await run(db, s.prune, [pool, before])).rowCount,
    dropLive: async (pool, workerId) => void (await run(db, s.drop, [pool, workerId])),
    liveVersions: async (pool, now) => (await run<VersionGroup>(db, s.live, [pool, now])).rows,
    unfinishedVersions: async (pool) => (await run<VersionGroup>(db, s.unfinished, [pool])).rows,
  };
}
