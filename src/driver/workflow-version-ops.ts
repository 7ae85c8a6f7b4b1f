/**
 * The driver operations behind workflow versions (src/workflow/versions.ts): parking a
 * pinned run that an advance brought to a process without its version, picking parked runs
 * up, and the heartbeat rows that say which (workflow, version) pairs live processes define.
 * Part of WorkflowOps: they run on the connection or transaction the ops were made for.
 */

/** A value now (SQLite) or later (PostgreSQL), as in workflow-ops.ts (which extends these ops). */
type Maybe<T> = T | Promise<T>;

/** One workflow a pool instance defines, as its heartbeat writes it. */
export interface LiveDefinition {
  name: string;
  version: string | null;
  pinned: boolean;
}

/** A (pool, workflow, version) group with a count: live processes, or unfinished runs. */
export interface VersionGroup {
  pool: string;
  name: string;
  version: string | null;
  /** Whether a process of the group pins the version, or a run of it is pinned. */
  pinned: boolean;
  count: number;
}

/** The version operations on one connection or transaction. */
export interface WorkflowVersionOps {
  /**
   * Marks run `id` parked at `now` if it is still at `generation` and unfinished (its
   * generation does not move: a process driving it in memory keeps its execution). False when
   * another writer moved it first.
   */
  parkRun(id: string, generation: number, now: number): Maybe<boolean>;
  /** Ids of up to `limit` parked runs of `pool` started by `version` of workflow `name`. */
  parkedRuns(pool: string, name: string, version: string, limit: number): Maybe<string[]>;
  /** Clears run `id`'s parked mark; true when it was set and the run is running or canceling (it needs an advance). */
  unparkRun(id: string): Maybe<boolean>;
  /** Writes (or refreshes) instance `workerId`'s rows, one per workflow it defines. */
  beatLive(pool: string, workerId: string, defs: readonly LiveDefinition[], now: number, expiresAt: number): Maybe<void>;
  /** Deletes the pool's rows that expired at or before `before` (processes that are gone); returns how many. */
  pruneLive(pool: string, before: number): Maybe<number>;
  /** Deletes instance `workerId`'s rows (it stopped). */
  dropLive(pool: string, workerId: string): Maybe<void>;
  /** The live processes (rows not expired at `now`) by pool, workflow and version; every pool when `pool` is null. */
  liveVersions(pool: string | null, now: number): Maybe<VersionGroup[]>;
  /** The unfinished runs (running, canceling, blocked) by pool, workflow and version; every pool when `pool` is null. */
  unfinishedVersions(pool: string | null): Maybe<VersionGroup[]>;
}
