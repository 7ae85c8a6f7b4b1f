/** The `workpool` CLI against PostgreSQL schemas of the test database (see suite.ts). */
import { expect, test } from "vitest";
import type { Store } from "../../src/index.js";
import { openTestStore } from "../helpers/stores.js";
import { adminQuery, DATABASE_URL, dropSchema, randomSchema, urlWithDatabase, useSharedServer } from "../postgres/helpers.js";
import { runCli } from "./run.js";
import { defineCliTests } from "./suite.js";

useSharedServer();

defineCliTests({
  name: "postgres",
  async create() {
    const t = await openTestStore("postgres", { connections: "own" });
    const { schema } = t;
    return {
      store: t.store as unknown as Store<unknown>,
      args: ["--db", DATABASE_URL, "--schema", schema],
      env: { vars: { DATABASE_URL }, args: ["--schema", schema] },
      async updateWork(id, columns) {
        const names = Object.keys(columns);
        const set = names.map((c, i) => `${c} = $${i + 1}`).join(", ");
        await adminQuery(`UPDATE "${schema}".work SET ${set} WHERE id = $${names.length + 1}`, [...Object.values(columns), id]);
      },
      dispose: () => t.cleanup(),
    };
  },
  async absent() {
    const schema = randomSchema();
    return {
      args: ["--db", DATABASE_URL, "--schema", schema],
      exists: async () => (await adminQuery("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema])).length > 0,
      dispose: () => dropSchema(schema),
    };
  },
});

test("a server that cannot be reached is exit 5, with the reason", async () => {
  const url = new URL(DATABASE_URL);
  url.port = "1";
  const run = await runCli(["--db", url.toString(), "pools"]);
  expect(run.code).toBe(5);
  expect(run.stderr).toMatch(/^workpool: could not reach the store: .*ECONNREFUSED/);
});

test("a database the server does not have is exit 3 (not found), naming it; migrate does not create databases", async () => {
  const url = urlWithDatabase(randomSchema("wp_missing"));
  for (const command of ["pools", "migrate"]) {
    const run = await runCli(["--db", url, command]);
    expect({ code: run.code, stderr: run.stderr }).toMatchObject({ code: 3 });
    expect(run.stderr).toMatch(/^workpool: .*database "wp_missing_\w+" does not exist; check --db/);
  }
});
