/** The workflow crash test (crash-suite.ts) on SQLite: the workers share one database file. */
import { openTestStore } from "../helpers/stores.js";
import { defineWorkflowCrashTest } from "./crash-suite.js";

const OURS = new Set(["work", "workflow_runs", "workflow_steps", "workflow_events"]);

defineWorkflowCrashTest({
  name: "sqlite",
  async open() {
    const t = await openTestStore("sqlite", { prefix: "workpool-wfcrash-" });
    return {
      store: t.store,
      childArgs: t.childArgs,
      table: (name) => (OURS.has(name) ? t.storeTable(name) : name),
      exec: (sql) => t.exec(sql),
      query: <R>(sql: string) => t.query<R>(sql),
      dispose: () => t.cleanup(),
    };
  },
});
