/**
 * The migrator's function files: a changed body is applied in place by its hash, a body a
 * newer release applied is left alone, a current schema is only read, and functions are
 * created before the migrations (bodies unchecked) on a new schema and on an upgrade.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { expect, test } from "vitest";
import { postgresStore } from "../../src/drivers/postgres/index.js";
import { compareVersions } from "../../src/drivers/postgres/functions.js";
import { migratePostgres, postgresSources, type PostgresSchemaSources } from "../../src/drivers/postgres/migrate.js";
import { DATABASE_URL, adminQuery, dropSchema, randomSchema, urlWithUser, useCleanups, useSharedServer } from "./helpers.js";
import { openTestStore } from "../helpers/stores.js";

useSharedServer();
const cleanups = useCleanups();

/** The functions table of `schema`, by name. */
const functionsTable = (schema: string) =>
  adminQuery<{ name: string; hash: string; version: string; applied_at: Date }>(
    `SELECT name, hash, version, applied_at FROM "${schema}".functions ORDER BY name`,
  );

/** What `stats_shard()` of `schema` answers: 0..15 as the file defines it, 99 as the tests below redefine it. */
const statsShard = async (schema: string): Promise<number> =>
  (await adminQuery<{ n: number }>(`SELECT "${schema}".stats_shard() AS n`))[0]!.n;

/** Gives `schema` another stats_shard() body, recorded with `hash` by workpool `version`. */
async function otherStatsShard(schema: string, hash: string, version: string): Promise<void> {
  await adminQuery(`CREATE OR REPLACE FUNCTION "${schema}".stats_shard() RETURNS INTEGER LANGUAGE sql STABLE AS $$ SELECT 99 $$`);
  await adminQuery(`UPDATE "${schema}".functions SET hash = $1, version = $2 WHERE name = 'stats_shard'`, [hash, version]);
}

/** A pg.Pool on the test database, ended after the test. */
function testPool(): pg.Pool {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  cleanups.push(() => pool.end());
  return pool;
}

test("a function file whose body changed is applied in place, and only that file", async () => {
  const { schema } = await openTestStore("postgres", { connections: "own", cleanups });
  // As a development build of this version with another stats_shard() left the schema.
  await otherStatsShard(schema, "another-body", postgresSources().version);
  const before = await functionsTable(schema);
  expect(await statsShard(schema)).toBe(99);

  const next = postgresStore({ connectionString: DATABASE_URL, schema });
  cleanups.push(() => next.close());
  await next.migrate();
  expect(await statsShard(schema)).toBeLessThan(16);
  const after = await functionsTable(schema);
  const shard = postgresSources().functions.find((f) => f.name === "stats_shard")!;
  expect(after.find((r) => r.name === "stats_shard")).toMatchObject({ hash: shard.hash, version: postgresSources().version });
  expect(after.filter((r) => r.name !== "stats_shard")).toEqual(before.filter((r) => r.name !== "stats_shard"));
});

test("a body that a newer release applied is left alone by an older process", async () => {
  const { schema } = await openTestStore("postgres", { connections: "own", cleanups });
  // A process of the next release changed stats_shard()'s body in place (same meaning, by
  // the rolling-deploy rule); this process, of the previous release, starts mid-rollout.
  await otherStatsShard(schema, "next-release-body", "999.0.0");
  const before = await functionsTable(schema);

  const old = postgresStore({ connectionString: DATABASE_URL, schema });
  cleanups.push(() => old.close());
  await old.migrate();
  expect(await statsShard(schema)).toBe(99);
  expect(await functionsTable(schema)).toEqual(before);
});

test("a current schema is only read: a role that may not create anything migrates it", async () => {
  const { schema } = await openTestStore("postgres", { connections: "own", cleanups });
  const role = `wp_reader_${randomBytes(4).toString("hex")}`;
  await adminQuery(`CREATE ROLE "${role}" LOGIN`);
  cleanups.push(async () => {
    await adminQuery(`DROP OWNED BY "${role}"`);
    await adminQuery(`DROP ROLE IF EXISTS "${role}"`);
  });
  await adminQuery(`GRANT USAGE ON SCHEMA "${schema}" TO "${role}"`);
  await adminQuery(`GRANT SELECT ON ALL TABLES IN SCHEMA "${schema}" TO "${role}"`);
  const url = urlWithUser(role);
  const reader = postgresStore({ connectionString: url, schema });
  cleanups.push(() => reader.close());
  await reader.migrate();
  // The same role is refused once a function file needs applying: the check is real.
  await otherStatsShard(schema, "another-body", postgresSources().version);
  const again = postgresStore({ connectionString: url, schema });
  cleanups.push(() => again.close());
  await expect(again.migrate()).rejects.toThrow(/permission denied/);
});

/**
 * This code's sources plus a migration 002 that creates a table, and a LANGUAGE sql
 * function reading that table: PostgreSQL checks such a body when the function is created.
 */
function withExtra(): PostgresSchemaSources {
  const src = postgresSources();
  return {
    ...src,
    migrations: [
      ...src.migrations,
      {
        version: src.migrations.length + 1,
        name: `${String(src.migrations.length + 1).padStart(3, "0")}_extra`,
        sql: 'CREATE TABLE :"schema".extra (n INTEGER);',
      },
    ],
    functions: [
      ...src.functions,
      {
        name: "count_extra",
        hash: "count-extra",
        sql: 'CREATE OR REPLACE FUNCTION :"schema".count_extra() RETURNS BIGINT LANGUAGE sql STABLE AS $$ SELECT count(*) FROM :"schema".extra $$;',
      },
    ],
  };
}

test("functions are created before the migrations that create what they read, on a new schema and on an upgrade", async () => {
  const pool = testPool();
  const fresh = randomSchema();
  const upgraded = randomSchema();
  cleanups.push(
    () => dropSchema(fresh),
    () => dropSchema(upgraded),
  );
  await migratePostgres(pool, fresh, withExtra());
  await migratePostgres(pool, upgraded, postgresSources());
  await migratePostgres(pool, upgraded, withExtra());
  for (const schema of [fresh, upgraded]) {
    await adminQuery(`INSERT INTO "${schema}".extra VALUES (1), (2)`);
    expect(await adminQuery(`SELECT "${schema}".count_extra() AS n`)).toEqual([{ n: "2" }]);
    expect(await adminQuery(`SELECT max(version) AS v FROM "${schema}".migrations`)).toEqual([
      { v: postgresSources().migrations.length + 1 },
    ]);
    // The migrations' triggers found their functions.
    expect(await adminQuery(`SELECT tgname FROM pg_trigger WHERE tgrelid = $1::regclass ORDER BY tgname`, [`"${schema}".work`])).toEqual([
      { tgname: "work_attempt_output_gone" },
      { tgname: "work_key_freed" },
    ]);
  }
});

test("versions order as semantic versions: numbers by value, a pre-release before its release", () => {
  const ordered = ["0.1.0", "0.2.0-alpha", "0.2.0-alpha.2", "0.2.0-alpha.10", "0.2.0-beta", "0.2.0", "0.10.0", "1.0.0+build.5", "10.0.0"];
  for (let i = 0; i < ordered.length; i++) {
    for (let j = 0; j < ordered.length; j++) {
      expect(compareVersions(ordered[i]!, ordered[j]!), `${ordered[i]} vs ${ordered[j]}`).toBe(Math.sign(i - j));
    }
  }
  expect(compareVersions("1.0.0+a", "1.0.0+b")).toBe(0);
});
