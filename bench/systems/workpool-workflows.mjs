// The workflow side of the workpool adapters (systems/workpool.mjs): a pool with a
// WorkflowManager, the bench's workflows and handlers, the same steps as plain work, and
// the store-specific helpers the workflow workloads need (app transactions, row counts).
//
// The handlers are the same for workflows and plain work: two no-op actions and a no-op
// mutation (a mutation still runs in its own transaction, as every mutation does).

import { createRequire } from "node:module";

/**
 * Store-specific helpers: an app transaction to start runs in, and row counts of the
 * workflow tables. `dist` is the built library's folder: the app connection must use the
 * same better-sqlite3 as the store, since two copies of SQLite in one process break each
 * other's file locks (closing a file in one drops the locks the other holds).
 */
export function sqliteKit(file, dist) {
  return {
    synchronousTx: true,
    /** Runs `fn(tx)` in one transaction of a second connection (start({ tx }) writes synchronously). */
    async appTransaction(fn) {
      const Database = createRequire(new URL("index.js", dist))("better-sqlite3");
      const app = new Database(file);
      app.pragma("busy_timeout = 10000");
      try {
        let pending;
        app.transaction(() => {
          pending = fn(app);
        })();
        await pending;
      } finally {
        app.close();
      }
    },
    table: (name) => `workpool_${name}`,
    async query(store, sql) {
      return store.db.prepare(sql).all();
    },
  };
}

/** The PostgreSQL helpers; `url` and `schema` are the adapter's. */
export function postgresKit(url, schema) {
  return {
    synchronousTx: false,
    async appTransaction(fn) {
      const { default: pg } = await import("pg");
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query("BEGIN");
        await fn(client);
        await client.query("COMMIT");
      } finally {
        await client.end();
      }
    },
    table: (name) => `"${schema}".${name}`,
    async query(_store, sql) {
      const { default: pg } = await import("pg");
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query(sql)).rows;
      } finally {
        await client.end();
      }
    },
  };
}

/** The name the WorkflowManager gives the internal advance action (a `completed` event's fnName). */
export const ADVANCE_FN = "workpool:workflow.advance";

/**
 * Opens a pool with a WorkflowManager on `store`. `lib` is the built library ({ Workpool,
 * WorkflowManager }); `kit` the store's helpers. `onRunDone(id)` is called when the
 * four-step workflow's function returns (its end commits right after).
 */
export function openWorkflowPool(lib, store, kit, { concurrency = 100, onRunDone } = {}) {
  const pool = new lib.Workpool(store, { name: "bench", maxParallelism: concurrency, logLevel: "ERROR" });
  const wf = new lib.WorkflowManager(pool);
  const a = pool.defineAction("a", async (_ctx, n) => n + 1);
  const m = pool.defineMutation("m", async (_ctx, n) => n * 2);
  const four = wf.define("four", async (step, n) => {
    const x = await step.runAction(a, n);
    const y = await step.runAction(a, x);
    const z = await step.runMutation(m, y);
    const r = await step.runAction(a, z);
    onRunDone?.(step.workflowId);
    return r;
  });
  const sleeper = wf.define("sleeper", async (step) => {
    await step.sleep(3_600_000);
    return 1;
  });
  // A long journal: `k` now() values (all journaled by the first advance) or `k` sequential action steps, then an event.
  const longNow = wf.define("long-now", async (step, { k }) => {
    let sum = 0;
    for (let i = 0; i < k; i++) sum += step.now() > 0 ? 1 : 0;
    await step.awaitEvent("go");
    return sum;
  });
  const longActions = wf.define("long-actions", async (step, { k }) => {
    let sum = 0;
    for (let i = 0; i < k; i++) sum = await step.runAction(a, sum);
    await step.awaitEvent("go");
    return sum;
  });
  const t = kit.table;
  let started = false;
  const opened = {
    pool,
    wf,
    flows: { four, sleeper, longNow, longActions },
    /** Starts `n` runs of the four-step workflow (a backlog, in app transactions). */
    startFour: (n) => opened.startRuns(four, n),
    /** Starts `n` runs of `flow` with args `argsOf(i)`, in app transactions of `per` runs. Returns their ids. */
    async startRuns(flow, n, argsOf = (i) => i, per = 500) {
      const ids = [];
      for (let from = 0; from < n; from += per) {
        await kit.appTransaction(async (tx) => {
          // SQLite's start({ tx }) writes before it returns (no await inside its synchronous transaction);
          // a pg client takes one query at a time.
          const calls = [];
          for (let i = from; i < Math.min(n, from + per); i++) {
            const call = wf.start(flow, argsOf(i), { tx });
            if (kit.synchronousTx) calls.push(call);
            else ids.push(await call);
          }
          ids.push(...(await Promise.all(calls)));
        });
      }
      return ids;
    },
    /** The four steps of `n` runs as plain work of the same handlers (a, a, m, a), written as a backlog. */
    async enqueuePlain(n) {
      for (let from = 0; from < n; from += 1000) {
        const args = Array.from({ length: Math.min(1000, n - from) }, (_, k) => from + k);
        await pool.enqueueActionBatch(a, args);
        await pool.enqueueActionBatch(a, args);
        await pool.enqueueMutationBatch(m, args);
        await pool.enqueueActionBatch(a, args);
      }
    },
    async start() {
      started = true;
      await pool.start();
    },
    /** Runs not finished yet. */
    async unfinishedRuns() {
      const rows = await kit.query(store, `SELECT count(*) AS n FROM ${t("workflow_runs")} WHERE state IN ('running', 'canceling')`);
      return Number(rows[0].n);
    },
    /** Rows of the workflow tables and of the work table (by state). */
    async rows() {
      const count = async (sql) => Number((await kit.query(store, sql))[0].n);
      return {
        runs: await count(`SELECT count(*) AS n FROM ${t("workflow_runs")}`),
        steps: await count(`SELECT count(*) AS n FROM ${t("workflow_steps")}`),
        events: await count(`SELECT count(*) AS n FROM ${t("workflow_events")}`),
        workPending: await count(`SELECT count(*) AS n FROM ${t("work")} WHERE state = 'pending'`),
        workFinished: await count(`SELECT count(*) AS n FROM ${t("work")} WHERE state = 'finished'`),
        workOther: await count(`SELECT count(*) AS n FROM ${t("work")} WHERE state NOT IN ('pending', 'finished')`),
      };
    },
    async close() {
      if (started) await pool.stop({ timeoutMs: 10_000 });
      await store.close();
    },
  };
  return opened;
}
