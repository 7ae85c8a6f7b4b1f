/** The `workpool` CLI against SQLite files (see suite.ts). */
import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import { sqliteStore } from "../../src/drivers/sqlite/index.js";
import type { Store } from "../../src/index.js";
import { tempDbPath } from "../helpers/tmp.js";
import { defineCliTests } from "./suite.js";

defineCliTests({
  name: "sqlite",
  async create() {
    const tmp = tempDbPath();
    const store = sqliteStore({ filename: tmp.path });
    return {
      store: store as unknown as Store<unknown>,
      args: ["--db", tmp.path],
      env: { vars: { WORKPOOL_DB: tmp.path }, args: [] },
      async updateWork(id, columns) {
        const db = new Database(tmp.path);
        try {
          const names = Object.keys(columns);
          db.prepare(`UPDATE workpool_work SET ${names.map((c) => `${c} = ?`).join(", ")} WHERE id = ?`).run(...Object.values(columns), id);
        } finally {
          db.close();
        }
      },
      async dispose() {
        await store.close();
        tmp.remove();
      },
    };
  },
  async absent() {
    const tmp = tempDbPath();
    return { args: ["--db", tmp.path], exists: async () => existsSync(tmp.path), dispose: async () => tmp.remove() };
  },
});
