/** The workflow crash test (crash-suite.ts) on PostgreSQL: the workers share one schema. */
import { postgresStore } from "../../src/drivers/postgres/index.js";
import { adminQuery, DATABASE_URL, dropSchema, randomSchema, useSharedServer } from "../postgres/helpers.js";
import { defineWorkflowCrashTest } from "./crash-suite.js";

// Keeps the chaos test (which restarts the server) from running at the same time.
useSharedServer();

defineWorkflowCrashTest({
  name: "postgres",
  async open() {
    const schema = randomSchema("wp_wfcrash");
    const store = postgresStore({ connectionString: DATABASE_URL, schema });
    await store.migrate();
    return {
      store,
      childArgs: ["postgres", DATABASE_URL, schema],
      table: (name) => `"${schema}".${name}`,
      exec: async (sql) => void (await adminQuery(sql)),
      query: <R>(sql: string) => adminQuery(sql) as Promise<R[]>,
      async dispose() {
        await store.close();
        await dropSchema(schema);
      },
    };
  },
});
