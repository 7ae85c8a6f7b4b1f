/**
 * The real stores a simulation runs on: one SQLite file, or one PostgreSQL schema, per
 * batch of seeds (each seed uses its own pool name in it). Besides the store, each gives
 * the checker raw reads of a pool's rows and of the application's own tables.
 */
import type { Database } from "better-sqlite3";
import type { PoolClient, QueryResult } from "pg";
import { DRIVER, type Driver, type PoolConfig, type Store, type WorkRow } from "../../src/driver/driver.js";
import { toPoolConfig, type SqlitePoolRow } from "../../src/drivers/sqlite/pools.js";
import { toWorkRow, type SqliteWorkRow } from "../../src/drivers/sqlite/rows.js";
import { toPoolConfig as toPgPoolConfig, type PgPoolRow } from "../../src/drivers/postgres/pools.js";
import { toWorkRow as toPgWorkRow, type PgWorkRow } from "../../src/drivers/postgres/rows.js";
import { openTestStore, type StoreKind } from "../helpers/stores.js";
import type { RateLimits } from "./rate-limits.js";
import { toWfSnapshot, wfQueries, type WfSnapshot } from "./wf-rows.js";

/** Which store a simulation runs on. */
export type { StoreKind };

/** What the checker reads after a step. */
export interface Snapshot {
  rows: WorkRow[];
  config: PoolConfig | null;
  /** Rows a mutation wrote in the app table, per work id. */
  apps: Map<string, number>;
  /** Result kinds onComplete handlers wrote, per work id. */
  ocs: Map<string, string[]>;
  /** Ids of pending rows a claim set aside because their key was at its limit. */
  parked: Set<string>;
  /** The pool's stored rate limits. */
  rates: RateLimits;
  /** The pool's workflow runs, journals and events (read only when asked for). */
  wf: WfSnapshot | null;
}

/** A store plus the raw reads and app writes of the simulator. */
export interface SimStore {
  readonly kind: StoreKind;
  readonly store: Store<unknown>;
  readonly driver: Driver<unknown>;
  /** The pool's rows, its stored configuration and the app tables' rows (and, with `workflows`, its workflows), read together. */
  snapshot(pool: string, workflows?: boolean): Promise<Snapshot>;
  /** Writes a mutation's app row inside its transaction. */
  writeApp(tx: unknown, pool: string, workId: string): Promise<void>;
  /** Writes an onComplete's row inside its transaction. */
  writeOc(tx: unknown, pool: string, workId: string, kind: string): Promise<void>;
  /** An error the driver counts as a lost connection. */
  connectionError(): Error;
  close(): Promise<void>;
}

const APP_TABLES = [
  "CREATE TABLE sim_app (pool TEXT NOT NULL, work_id TEXT NOT NULL)",
  "CREATE TABLE sim_oc (pool TEXT NOT NULL, work_id TEXT NOT NULL, kind TEXT NOT NULL)",
];

function group<R extends { work_id: string }, T>(rows: R[], value: (r: R) => T): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const list = out.get(r.work_id) ?? [];
    list.push(value(r));
    out.set(r.work_id, list);
  }
  return out;
}

/** The rate-limit columns of a pool row, as both stores name them. */
interface RateColumns {
  rate_limit: number | null;
  rate_period_ms: number | string | null;
  key_rate_limit: number | null;
  key_rate_period_ms: number | string | null;
}

const POOL_COLUMNS = "max_parallelism, log_level, key_parallelism, rate_limit, rate_period_ms, key_rate_limit, key_rate_period_ms";

function ratesOf(r: RateColumns | undefined): RateLimits {
  const one = (limit: number | null, periodMs: number | string | null) =>
    limit === null || periodMs === null ? null : { limit, periodMs: Number(periodMs) };
  return r
    ? { rateLimit: one(r.rate_limit, r.rate_period_ms), keyRateLimit: one(r.key_rate_limit, r.key_rate_period_ms) }
    : { rateLimit: null, keyRateLimit: null };
}

function count(rows: { work_id: string }[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) out.set(r.work_id, (out.get(r.work_id) ?? 0) + 1);
  return out;
}

/** A SQLite store on a fresh temporary file. */
export async function createSqliteSimStore(): Promise<SimStore> {
  // Durability is not what a run tests (its crashes are in-process), speed is: no fsync.
  const t = await openTestStore("sqlite", { prefix: "workpool-sim-", unsynced: true, appTables: APP_TABLES });
  const { store } = t;
  const db = store.db;
  const driver = store[DRIVER] as Driver<unknown>;
  const work = db.prepare<[string], SqliteWorkRow>("SELECT * FROM workpool_work WHERE pool = ?");
  const config = db.prepare<[string], SqlitePoolRow & RateColumns>(`SELECT ${POOL_COLUMNS} FROM workpool_pools WHERE name = ?`);
  const app = db.prepare<[string], { work_id: string }>("SELECT work_id FROM sim_app WHERE pool = ?");
  const oc = db.prepare<[string], { work_id: string; kind: string }>("SELECT work_id, kind FROM sim_oc WHERE pool = ?");
  const wf = wfQueries({ runs: "workpool_workflow_runs", steps: "workpool_workflow_steps", events: "workpool_workflow_events" }, "?").map(
    (sql) => db.prepare<[string], Record<string, unknown>>(sql),
  );
  return {
    kind: "sqlite",
    store: store as Store<unknown>,
    driver,
    async snapshot(pool, workflows) {
      const cfg = config.get(pool);
      const raw = work.all(pool);
      return {
        wf: workflows ? toWfSnapshot(wf[0]!.all(pool), wf[1]!.all(pool), wf[2]!.all(pool)) : null,
        rows: raw.map(toWorkRow),
        parked: new Set(raw.filter((r) => r.parked).map((r) => r.id)),
        config: cfg ? toPoolConfig(cfg) : null,
        rates: ratesOf(cfg),
        apps: count(app.all(pool)),
        ocs: group(oc.all(pool), (r) => r.kind),
      };
    },
    async writeApp(tx, pool, workId) {
      (tx as Database).prepare("INSERT INTO sim_app (pool, work_id) VALUES (?, ?)").run(pool, workId);
    },
    async writeOc(tx, pool, workId, kind) {
      (tx as Database).prepare("INSERT INTO sim_oc (pool, work_id, kind) VALUES (?, ?, ?)").run(pool, workId, kind);
    },
    connectionError: () => Object.assign(new Error("sim: disk I/O error"), { code: "SQLITE_IOERR" }),
    close: () => t.cleanup(),
  };
}

/** A PostgreSQL store in a fresh schema of the test database; close() drops it. */
export async function createPostgresSimStore(): Promise<SimStore> {
  const t = await openTestStore("postgres", { prefix: "wp_sim", appPoolSize: 4, appTables: APP_TABLES });
  const { store, schema, app } = t;
  const driver = store[DRIVER] as Driver<unknown>;
  const wfTables = { runs: `"${schema}".workflow_runs`, steps: `"${schema}".workflow_steps`, events: `"${schema}".workflow_events` };
  return {
    kind: "postgres",
    store: store as Store<unknown>,
    driver,
    async snapshot(pool, workflows) {
      // One round trip: four statements (seven with the workflows) in one simple query (the pool name is the run's own).
      const p = `'${pool.replace(/'/g, "''")}'`;
      const wf = workflows ? wfQueries(wfTables, p) : [];
      const results = (await app.query(
        [
          `SELECT * FROM "${schema}".work WHERE pool = ${p}`,
          `SELECT ${POOL_COLUMNS} FROM "${schema}".pools WHERE name = ${p}`,
          `SELECT work_id FROM sim_app WHERE pool = ${p}`,
          `SELECT work_id, kind FROM sim_oc WHERE pool = ${p}`,
          ...wf,
        ].join(";\n"),
      )) as unknown as QueryResult[];
      const [work, pools, apps, ocs, runs, steps, events] = results.map((r) => r.rows as unknown[]);
      const raw = work as (PgWorkRow & { parked: boolean })[];
      return {
        wf: workflows
          ? toWfSnapshot(runs as Record<string, unknown>[], steps as Record<string, unknown>[], events as Record<string, unknown>[])
          : null,
        rows: raw.map(toPgWorkRow),
        parked: new Set(raw.filter((r) => r.parked).map((r) => r.id)),
        config: pools!.length ? toPgPoolConfig(pools![0] as PgPoolRow) : null,
        rates: ratesOf(pools![0] as RateColumns | undefined),
        apps: count(apps as { work_id: string }[]),
        ocs: group(ocs as { work_id: string; kind: string }[], (r) => r.kind),
      };
    },
    async writeApp(tx, pool, workId) {
      await (tx as PoolClient).query("INSERT INTO sim_app (pool, work_id) VALUES ($1, $2)", [pool, workId]);
    },
    async writeOc(tx, pool, workId, kind) {
      await (tx as PoolClient).query("INSERT INTO sim_oc (pool, work_id, kind) VALUES ($1, $2, $3)", [pool, workId, kind]);
    },
    connectionError: () => Object.assign(new Error("sim: connection reset"), { code: "ECONNRESET" }),
    close: () => t.cleanup(),
  };
}

/** A store of the given kind. */
export function createSimStore(kind: StoreKind): Promise<SimStore> {
  return kind === "sqlite" ? createSqliteSimStore() : createPostgresSimStore();
}
