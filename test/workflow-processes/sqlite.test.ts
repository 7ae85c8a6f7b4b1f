/** The workflow crash test (crash-suite.ts) on SQLite: the workers share one database file. */
import { sqliteStore } from "../../src/drivers/sqlite/index.js";
import { tempDbPath } from "../helpers/tmp.js";
import { defineWorkflowCrashTest } from "./crash-suite.js";

const OURS = new Set(["work", "workflow_runs", "workflow_steps", "workflow_events"]);

defineWorkflowCrashTest({
  name: "sqlite",
  async open() {
    const tmp = tempDbPath("workpool-wfcrash-");
    const store = sqliteStore({ filename: tmp.path });
    await store.migrate();
    return {
      store,
      childArgs: ["sqlite", tmp.path],
      table: (name) => (OURS.has(name) ? `workpool_${name}` : name),
      exec: async (sql) => void store.db.exec(sql),
      query: async <R>(sql: string) => store.db.prepare(sql).all() as R[],
      async dispose() {
        await store.close();
        tmp.remove();
      },
    };
  },
});
