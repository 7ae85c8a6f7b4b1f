/**
 * PostgreSQL migrations: many stores migrating one schema at once is safe (advisory
 * lock), a migrated schema is left alone, and a schema newer than the code, or made by an
 * unreleased development build, is refused. Function files are applied by their hash.
 */
import { expect, test } from "vitest";
import { Workpool } from "../../src/index.js";
import { newWorkId } from "../../src/ids.js";
import { postgresStore } from "../../src/drivers/postgres/index.js";
import { postgresMigrations, postgresSources } from "../../src/drivers/postgres/migrate.js";
import { DATABASE_URL, adminQuery, dropSchema, randomSchema, useSharedServer } from "./helpers.js";
import { quietLogger as quiet } from "../helpers/common.js";
import { openTestStore } from "../helpers/stores.js";

useSharedServer();

/** The function files as a schema migrated by this code records them. */
const recordedFunctions = (): { name: string; hash: string; version: string }[] =>
  postgresSources().functions.map((f) => ({ name: f.name, hash: f.hash, version: postgresSources().version }));

test("eight stores migrating a new schema at the same moment create it once", async () => {
  const schema = randomSchema();
  const stores = Array.from({ length: 8 }, () => postgresStore({ connectionString: DATABASE_URL, schema }));
  try {
    await Promise.all(stores.map((s) => s.migrate()));
    const rows = await adminQuery<{ version: number; name: string }>(`SELECT version, name FROM "${schema}".migrations ORDER BY version`);
    expect(rows).toEqual(postgresMigrations().map((m) => ({ version: m.version, name: m.name })));
    const tables = await adminQuery<{ t: string }>("SELECT tablename AS t FROM pg_tables WHERE schemaname = $1 ORDER BY 1", [schema]);
    expect(tables.map((r) => r.t)).toEqual([
      "freed_keys",
      "functions",
      "leaders",
      "migrations",
      "pools",
      "schedules",
      "starts",
      "stats",
      "work",
      "workflow_events",
      "workflow_live",
      "workflow_runs",
      "workflow_steps",
    ]);
    expect(await adminQuery(`SELECT name, hash, version FROM "${schema}".functions ORDER BY name`)).toEqual(recordedFunctions());
    // claim() returns one row of the columns rows.ts reads; none for a pool without config.
    const claim = await stores[0]!.pool.query(`SELECT * FROM "${schema}".claim('no-such-pool', 'w', 0, 0, 0, NULL, NULL, NULL)`);
    expect(claim.rows).toEqual([]);
    expect(claim.fields.map((f) => f.name)).toEqual([
      "max_parallelism",
      "log_level",
      "key_parallelism",
      "running_count",
      "next_run_at",
      "claimed",
    ]);
    // Once more on a migrated schema: nothing changes.
    await Promise.all(stores.map((s) => s.migrate()));
    expect(await adminQuery(`SELECT version FROM "${schema}".migrations`)).toHaveLength(postgresMigrations().length);
  } finally {
    await Promise.all(stores.map((s) => s.close()));
    await dropSchema(schema);
  }
});

test("a mixed-case schema name is quoted everywhere and works end to end", async () => {
  const t = await openTestStore("postgres", { prefix: "Wp_Mixed", connections: "own", migrate: false });
  const { schema, store } = t;
  try {
    const pool = new Workpool(store, { name: "mixed", logger: quiet });
    const echo = pool.defineAction("echo", (_c, n: number) => n + 1);
    const id = await pool.enqueueAction(echo, 41);
    expect((await pool.runOnce()).claimed).toBe(1);
    expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: 42 } });
    const found = await adminQuery("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
    expect(found).toHaveLength(1);
  } finally {
    await t.cleanup();
  }
});

test("a database whose schema is newer than this code is refused with a clear error", async () => {
  const first = await openTestStore("postgres", { connections: "own" });
  const { schema } = first;
  const known = postgresMigrations().length;
  try {
    await adminQuery(`INSERT INTO "${schema}".migrations (version, name) VALUES ($1, 'from_the_future')`, [known + 1]);
    const second = postgresStore({ connectionString: DATABASE_URL, schema });
    try {
      const message = `the database schema is at version ${known + 1}, but this version of workpool knows only up to ${known}`;
      await expect(second.migrate()).rejects.toThrow(message);
      // Also through the pool API, which migrates on first use; and again (not memoized as success).
      const pool = new Workpool(second, { name: "p" });
      const a = pool.defineAction("a", () => 1);
      await expect(pool.enqueueAction(a, {})).rejects.toThrow(message);
      await expect(second.migrate()).rejects.toThrow(message);
    } finally {
      await second.close();
    }
  } finally {
    await first.cleanup();
  }
});

/** The migration names that unreleased development builds recorded. */
const DEVELOPMENT_HISTORIES = [
  [
    "001_init",
    "002_one_round_trip",
    "003_enqueue_claim",
    "004_c_collation",
    "005_stable_plans",
    "006_domain_checks",
    "007_complete_returns_stale",
    "008_claim_after",
  ],
  ["001_baseline", "002_priorities_keys", "003_admin", "004_schedules_rate_limits", "005_work_meta"],
];

test.each(DEVELOPMENT_HISTORIES)(
  "a schema made by an unreleased development build (%s, ...) is refused with a clear error, and nothing in it changes",
  async (...oldNames) => {
    const schema = randomSchema();
    // As development builds left it: their migrations recorded, and their tables (here one,
    // with one queued row).
    await adminQuery(`CREATE SCHEMA "${schema}"`);
    await adminQuery(
      `CREATE TABLE "${schema}".migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    );
    await adminQuery(`INSERT INTO "${schema}".migrations (version, name) SELECT i, n FROM unnest($1::text[]) WITH ORDINALITY AS t(n, i)`, [
      oldNames,
    ]);
    await adminQuery(`CREATE TABLE "${schema}".work (id TEXT PRIMARY KEY, pool TEXT NOT NULL, state TEXT NOT NULL)`);
    await adminQuery(`INSERT INTO "${schema}".work VALUES ('w1', 'old', 'pending')`);
    const contents = async () => ({
      objects: await adminQuery(
        `SELECT c.relname, c.relkind FROM pg_class c WHERE c.relnamespace = $1::regnamespace
         UNION ALL SELECT p.proname, 'f' FROM pg_proc p WHERE p.pronamespace = $1::regnamespace
         UNION ALL SELECT t.typname, 'd' FROM pg_type t WHERE t.typnamespace = $1::regnamespace AND t.typtype = 'd'
         ORDER BY 1, 2`,
        [schema],
      ),
      migrations: await adminQuery(`SELECT version, name, applied_at FROM "${schema}".migrations ORDER BY version`),
      work: await adminQuery(`SELECT * FROM "${schema}".work`),
    });
    const before = await contents();
    const store = postgresStore({ connectionString: DATABASE_URL, schema });
    try {
      const message = `the database schema was created by an unreleased development build of workpool (it records migration 1 as ${oldNames[0]}, where this version has 001_schema)`;
      await expect(store.migrate()).rejects.toThrow(message);
      await expect(store.migrate()).rejects.toThrow(/Recreate it: drop workpool's schema/);
      const pool = new Workpool(store, { name: "old", logger: quiet });
      const a = pool.defineAction("a", () => 1);
      await expect(pool.enqueueAction(a, {})).rejects.toThrow(message);
      expect(await contents()).toEqual(before);
    } finally {
      await store.close();
      await dropSchema(schema);
    }
  },
);

test("the schema accepts only the kinds, states and onComplete states of the state machine", async () => {
  const t = await openTestStore("postgres", { connections: "own" });
  const { schema } = t;
  try {
    const insert = (kind: string, state: string, ocState: string) =>
      adminQuery(
        `INSERT INTO "${schema}".work (id, pool, kind, fn_name, args, state, run_at, enqueued_at, oc_state)
         VALUES ($1, 'p', $2, 'f', '1', $3, 0, 0, $4)`,
        [newWorkId(0), kind, state, ocState],
      );
    await insert("action", "pending", "none");
    await insert("mutation", "finished", "done");
    await expect(insert("job", "pending", "none")).rejects.toThrow(/work_kind/);
    await expect(insert("action", "paused", "none")).rejects.toThrow(/work_state/);
    await expect(insert("action", "finished", "sent")).rejects.toThrow(/on_complete_state/);
    await expect(adminQuery(`UPDATE "${schema}".work SET state = 'lost'`)).rejects.toThrow(/work_state/);
    const rows = await adminQuery<{ kind: string; state: string }>(`SELECT kind, state FROM "${schema}".work ORDER BY kind`);
    expect(rows).toEqual([
      { kind: "action", state: "pending" },
      { kind: "mutation", state: "finished" },
    ]);
  } finally {
    await t.cleanup();
  }
});
