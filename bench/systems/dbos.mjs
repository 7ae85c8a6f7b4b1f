// DBOS Transact (@dbos-inc/dbos-sdk): durable workflows on PostgreSQL. It takes part in the
// workflow workloads only (it has no `open`, the plain-queue interface): the four-step
// workflow of wf-steps, run from a DBOS queue by one launched process.
//
// Its mutation step is a plain DBOS step (DBOS.runStep), not a transaction whose writes
// commit with its checkpoint: DBOS 5 does that through a data source package, and the
// published ones (@dbos-inc/postgres-datasource 4.24.16, @dbos-inc/knex-datasource 4.5.13)
// fail against SDK 5.3 (they call createTransactionCompletionSchemaPG, which SDK 5 no
// longer exports). See notes/workflows.md.
import { existsSync, readFileSync } from "node:fs";
import pg from "pg";
import { PG_URL } from "../lib/env.mjs";
import { dropSchema } from "../lib/pg.mjs";

const SCHEMA = "dbos_bench";
const QUEUE = "bench";
const PKG = new URL("../node_modules/@dbos-inc/dbos-sdk/package.json", import.meta.url);

async function count(sql) {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return Number((await client.query(sql)).rows[0].n);
  } finally {
    await client.end();
  }
}

export default {
  id: "dbos",
  label: "DBOS",
  store: "postgres",
  commitReference: "postgres",
  ours: false,
  packageName: "@dbos-inc/dbos-sdk",
  durability: "each step's checkpoint committed to PostgreSQL before the workflow goes on (server default synchronous_commit=on)",
  config:
    `DBOS.setConfig({ name: "bench", systemDatabaseUrl, systemDatabaseSchemaName: "${SCHEMA}" }); ` +
    `workflows enqueued with DBOSClient on queue "${QUEUE}" (workerConcurrency N, minPollingIntervalMs 100), run by DBOS.launch(); ` +
    "each step DBOS.runStep (the mutation step too: see systems/dbos.mjs).",
  skip: [],
  async available() {
    return existsSync(PKG) ? null : "@dbos-inc/dbos-sdk is not installed in bench/ (npm ci in bench/)";
  },
  version: () => JSON.parse(readFileSync(PKG, "utf8")).version,
  async reset() {
    await dropSchema(SCHEMA);
  },
  /** The four-step workflow on a DBOS queue; `onRunDone(id)` when a run's function returns. */
  async openWorkflows(_ctx, { concurrency = 100, onRunDone } = {}) {
    const { DBOS, DBOSClient } = await import("@dbos-inc/dbos-sdk");
    await DBOS.migrate(PG_URL, { schemaName: SCHEMA });
    const client = await DBOSClient.create({ systemDatabaseUrl: PG_URL, systemDatabaseSchemaName: SCHEMA, applicationName: "bench" });
    await client.registerQueue(QUEUE, { workerConcurrency: concurrency, minPollingIntervalMs: 100 });
    DBOS.setConfig({ name: "bench", systemDatabaseUrl: PG_URL, systemDatabaseSchemaName: SCHEMA, logLevel: "error" });
    const a = async (n) => n + 1;
    const m = async (n) => n * 2;
    DBOS.registerWorkflow(
      async (n) => {
        const x = await DBOS.runStep(() => a(n), { name: "a" });
        const y = await DBOS.runStep(() => a(x), { name: "a" });
        const z = await DBOS.runStep(() => m(y), { name: "m" });
        const r = await DBOS.runStep(() => a(z), { name: "a" });
        onRunDone?.(DBOS.workflowID);
        return r;
      },
      { name: "four" },
    );
    let launched = false;
    return {
      /** Enqueues `n` runs on the queue (before launch: a backlog). */
      async startFour(n) {
        for (let from = 0; from < n; from += 100) {
          const batch = Array.from({ length: Math.min(100, n - from) }, (_, k) => from + k);
          await Promise.all(batch.map((i) => client.enqueue({ queueName: QUEUE, workflowName: "four" }, i)));
        }
      },
      async start() {
        launched = true;
        await DBOS.launch();
      },
      unfinishedRuns: () => count(`SELECT count(*) AS n FROM ${SCHEMA}.workflow_status WHERE status IN ('PENDING', 'ENQUEUED')`),
      async close() {
        await client.destroy();
        if (launched) await DBOS.shutdown();
      },
    };
  },
};
