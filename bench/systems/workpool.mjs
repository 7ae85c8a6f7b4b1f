// workpool on SQLite (synchronous FULL, the default, or NORMAL) and on PostgreSQL.
// The bench measures the built library (../dist), so run `npm run build` first.
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { dropSchema } from "../lib/pg.mjs";
import { PG_URL } from "../lib/env.mjs";
import { openWorkflowPool, postgresKit, sqliteKit } from "./workpool-workflows.mjs";

const PG_SCHEMA = "workpool_bench";

/**
 * The built library: the runner copies ../dist once per run (ctx.dist), so the whole run
 * measures one build even if dist is rebuilt meanwhile; ../dist when run without it.
 */
const distOf = (ctx) => new URL(ctx?.dist ?? new URL("../../dist/", import.meta.url).href);
const postgresModule = (ctx) => new URL("drivers/postgres/index.js", distOf(ctx));

function version() {
  return JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version;
}

/** The built library's Workpool and WorkflowManager. */
async function library(ctx) {
  const { Workpool } = await import(new URL("index.js", distOf(ctx)).href);
  const { WorkflowManager } = await import(new URL("workflow/index.js", distOf(ctx)).href);
  return { Workpool, WorkflowManager };
}

function builtCheck(ctx) {
  return existsSync(new URL("index.js", distOf(ctx))) ? null : "the library is not built: run `npm run build` at the repository root";
}

/** Opens a pool on `store` with one no-op action; shared by both stores. */
async function openPool(ctx, store, { concurrency, keyParallelism, onStart, onDone }) {
  const { Workpool } = await import(new URL("index.js", distOf(ctx)).href);
  const pool = new Workpool(store, { name: "bench", maxParallelism: concurrency ?? 10, keyParallelism, logLevel: "ERROR" });
  const noop = pool.defineAction("noop", async (_ctx, args) => {
    onStart?.(args.i);
  });
  if (onDone) pool.on("completed", () => onDone(1));
  let started = false;
  return {
    enqueueOne: (payload) => pool.enqueueAction(noop, payload),
    enqueueBatch: (payloads) => pool.enqueueActionBatch(noop, payloads),
    /** `key` and `priority` are options of a whole enqueue call: one batch per (key, priority). */
    async enqueueKeyedBatch(payloads) {
      const groups = new Map();
      for (const { i, key, priority } of payloads) {
        const id = `${key}\u0000${priority}`;
        if (!groups.has(id)) groups.set(id, { key, priority, args: [] });
        groups.get(id).args.push({ i });
      }
      for (const { key, priority, args } of groups.values()) await pool.enqueueActionBatch(noop, args, { key, priority });
    },
    async start() {
      started = true;
      await pool.start();
    },
    async close() {
      if (started) await pool.stop({ timeoutMs: 10_000 });
      await store.close();
    },
  };
}

/** workpool on an SQLite file. */
export function workpoolSqlite(synchronous) {
  const suffix = synchronous === "FULL" ? "" : "-normal";
  const file = (ctx) => join(ctx.dir, `workpool${suffix}.db`);
  return {
    id: `workpool-sqlite${suffix}`,
    label: synchronous === "FULL" ? "workpool SQLite" : "workpool SQLite NORMAL",
    store: "sqlite",
    commitReference: synchronous === "FULL" ? "sqliteFull" : "sqliteNormal",
    ours: synchronous === "FULL",
    packageName: "workpool",
    durability:
      synchronous === "FULL"
        ? "every commit fsynced (WAL, synchronous=FULL, the default)"
        : "survives a process crash, not power loss (WAL, synchronous=NORMAL)",
    config:
      `sqliteStore({ filename, synchronous: "${synchronous}" }) (WAL, busy_timeout 5000, poll 100 ms); ` +
      '`new Workpool(store, { maxParallelism: N, logLevel: "ERROR" })`; enqueueAction / enqueueActionBatch; no retry (the default).',
    // The NORMAL row is a separately labelled extra: it skips the long workloads.
    skip: synchronous === "FULL" ? [] : ["large-backlog", "latency", "drain-keys", "wf-sleepers", "wf-replay"],
    available: async (ctx) => builtCheck(ctx),
    version,
    async reset(ctx) {
      for (const ext of ["", "-wal", "-shm"]) rmSync(file(ctx) + ext, { force: true });
    },
    async openStore(ctx) {
      const { sqliteStore } = await import(new URL("drivers/sqlite/index.js", distOf(ctx)).href);
      return sqliteStore({ filename: file(ctx), synchronous });
    },
    async open(ctx, opts) {
      return openPool(ctx, await this.openStore(ctx), opts);
    },
    /** A pool with a WorkflowManager and the bench's workflows (systems/workpool-workflows.mjs). */
    async openWorkflows(ctx, opts) {
      return openWorkflowPool(await library(ctx), await this.openStore(ctx), sqliteKit(file(ctx), distOf(ctx)), opts);
    },
    /**
     * A fresh store of the same kind on its own file, for the raw SQL reference of the
     * CPU-per-job workload (its connection has the store's pragmas). Returns the files to remove.
     */
    async openReference(ctx) {
      const { sqliteStore } = await import(new URL("drivers/sqlite/index.js", distOf(ctx)).href);
      const ref = join(ctx.dir, `reference${suffix}.db`);
      const files = ["", "-wal", "-shm"].map((ext) => ref + ext);
      for (const f of files) rmSync(f, { force: true });
      return { store: sqliteStore({ filename: ref, synchronous }), files };
    },
  };
}

/** workpool on PostgreSQL; available once the PostgreSQL driver is built. */
export const workpoolPostgres = {
  id: "workpool-postgres",
  label: "workpool PostgreSQL",
  store: "postgres",
  commitReference: "postgres",
  ours: true,
  packageName: "workpool",
  durability: "every commit WAL-flushed (server default synchronous_commit=on)",
  config:
    `postgresStore({ connectionString, schema: "${PG_SCHEMA}" }) (pg.Pool default size 10, LISTEN/NOTIFY wake-ups); ` +
    '`new Workpool(store, { maxParallelism: N, logLevel: "ERROR" })`; enqueueAction / enqueueActionBatch.',
  skip: [],
  schema: PG_SCHEMA,
  async available(ctx) {
    const built = builtCheck(ctx);
    if (built) return built;
    if (!existsSync(postgresModule(ctx))) return "the PostgreSQL driver is not built yet (dist/drivers/postgres/index.js is missing)";
    return null;
  },
  version,
  async reset() {
    await dropSchema(PG_SCHEMA);
  },
  async openStore(ctx) {
    const { postgresStore } = await import(postgresModule(ctx).href);
    const store = postgresStore({ connectionString: PG_URL, schema: PG_SCHEMA });
    await store.migrate();
    return store;
  },
  async open(ctx, opts) {
    return openPool(ctx, await this.openStore(ctx), opts);
  },
  async openWorkflows(ctx, opts) {
    return openWorkflowPool(await library(ctx), await this.openStore(ctx), postgresKit(PG_URL, PG_SCHEMA), opts);
  },
  /**
   * Retention of every finished job, as the maintenance leader runs it: a pool with
   * retentionMs 0, maintenance passes (runOnce) until one deletes nothing.
   */
  async cleanup(ctx) {
    const { Workpool } = await import(new URL("index.js", distOf(ctx)).href);
    const store = await this.openStore(ctx);
    const pool = new Workpool(store, { name: "bench", retentionMs: 0, logLevel: "ERROR" });
    pool.defineAction("noop", async () => {});
    let deleted = 0;
    let passes = 0;
    try {
      for (;;) {
        const r = await pool.runOnce();
        passes++;
        if (!r.leader) throw new Error("the retention pass did not get the maintenance lease");
        deleted += r.deleted;
        if (r.deleted === 0) return { deleted, passes };
      }
    } finally {
      await store.close();
    }
  },
};
