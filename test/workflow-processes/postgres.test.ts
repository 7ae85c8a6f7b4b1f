/** The workflow crash test (crash-suite.ts) on PostgreSQL: the workers share one schema. */
import { adminQuery, useSharedServer } from "../postgres/helpers.js";
import { openTestStore } from "../helpers/stores.js";
import { defineWorkflowCrashTest } from "./crash-suite.js";

// Keeps the chaos test (which restarts the server) from running at the same time.
useSharedServer();

defineWorkflowCrashTest({
  name: "postgres",
  async open() {
    const t = await openTestStore("postgres", { prefix: "wp_wfcrash", connections: "own" });
    return {
      store: t.store,
      childArgs: t.childArgs,
      table: (name) => `"${t.schema}".${name}`,
      exec: async (sql) => void (await adminQuery(sql)),
      query: <R>(sql: string) => adminQuery(sql) as Promise<R[]>,
      dispose: () => t.cleanup(),
    };
  },
});
