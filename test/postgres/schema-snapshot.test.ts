/**
 * src/drivers/postgres/schema.sql is the schema the migrations create: a new schema,
 * migrated by the store's own migrator and dumped as `npm run schema:dump` does, must read
 * exactly as the checked-in snapshot.
 */
import { readFileSync } from "node:fs";
import { expect, test } from "vitest";
import pg from "pg";
import { migratePostgres } from "../../src/drivers/postgres/migrate.js";
import { SNAPSHOT_FILES, dumpPostgresSchema } from "../../scripts/dump-schema.mjs";
import { DATABASE_URL, adminQuery, useCleanups, useSharedServer } from "./helpers.js";

useSharedServer();
const cleanups = useCleanups();

test("the checked-in PostgreSQL schema snapshot matches a freshly migrated schema", async () => {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
  cleanups.push(() => pool.end());
  const dumped = await dumpPostgresSchema({
    connectionString: DATABASE_URL,
    migrate: (schema) => migratePostgres(pool, schema),
    admin: (sql) => adminQuery(sql),
  });
  const checkedIn = readFileSync(SNAPSHOT_FILES.postgres, "utf8");
  expect(dumped, "src/drivers/postgres/schema.sql is out of date: run `npm run schema:dump` and commit it").toBe(checkedIn);
});
