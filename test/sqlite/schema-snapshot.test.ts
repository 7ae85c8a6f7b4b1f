/**
 * src/drivers/sqlite/schema.sql is the schema the migrations create: a new file, migrated
 * by the store's own migrator and read from sqlite_master as `npm run schema:dump` does,
 * must read exactly as the checked-in snapshot.
 */
import { readFileSync } from "node:fs";
import { expect, test } from "vitest";
import { migrateSqlite } from "../../src/drivers/sqlite/migrate.js";
import { SNAPSHOT_FILES, dumpSqliteSchema } from "../../scripts/dump-schema.mjs";

test("the checked-in SQLite schema snapshot matches a freshly migrated file", () => {
  const dumped = dumpSqliteSchema({ migrate: migrateSqlite });
  const checkedIn = readFileSync(SNAPSHOT_FILES.sqlite, "utf8");
  expect(dumped, "src/drivers/sqlite/schema.sql is out of date: run `npm run schema:dump` and commit it").toBe(checkedIn);
});
