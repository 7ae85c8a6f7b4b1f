/** The `workpool` CLI against SQLite files (see suite.ts). */
import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import type { Store } from "../../src/index.js";
import { openTestStore, tempDbPath } from "../helpers/stores.js";
import { defineCliTests } from "./suite.js";

defineCliTests({
  name: "sqlite",
  async create() {
    const t = await openTestStore("sqlite");
    return {
      store: t.store as unknown as Store<unknown>,
      args: ["--db", t.path],
      env: { vars: { WORKPOOL_DB: t.path }, args: [] },
      async updateWork(id, columns) {
        // A connection of its own, as a tool other than workpool would open.
        const db = new Database(t.path);
        try {
          const names = Object.keys(columns);
          db.prepare(`UPDATE workpool_work SET ${names.map((c) => `${c} = ?`).join(", ")} WHERE id = ?`).run(...Object.values(columns), id);
        } finally {
          db.close();
        }
      },
      dispose: () => t.cleanup(),
    };
  },
  async absent() {
    const tmp = tempDbPath();
    return { args: ["--db", tmp.path], exists: async () => existsSync(tmp.path), dispose: async () => tmp.remove() };
  },
});
