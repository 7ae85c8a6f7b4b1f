-- workpool schema for PostgreSQL, version 4: work ids and pool names compare byte-wise.
-- :"schema" is replaced by the store's quoted schema name before this file runs.

-- Ids and pool names are compared on every claim, completion and lookup. Under the
-- database's collation (often a libc locale such as en_US.UTF-8 or C.UTF-8) each
-- comparison goes through the locale; "C" compares bytes. Ids are ASCII, so their order
-- is unchanged (it is also the order JavaScript's < gives). The indexes on these columns
-- are rebuilt; the tables are not rewritten.
ALTER TABLE :"schema".work
  ALTER COLUMN id TYPE TEXT COLLATE "C",
  ALTER COLUMN pool TYPE TEXT COLLATE "C";
ALTER TABLE :"schema".pools ALTER COLUMN name TYPE TEXT COLLATE "C";
ALTER TABLE :"schema".stats ALTER COLUMN pool TYPE TEXT COLLATE "C";
ALTER TABLE :"schema".leaders ALTER COLUMN pool TYPE TEXT COLLATE "C";
