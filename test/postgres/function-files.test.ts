/**
 * The PostgreSQL schema's SQL files keep their shape: migrations hold DDL only, each
 * function is defined in exactly one file of sql/functions/ named after it, and every
 * function a file or the driver calls has its file (and every file is called).
 */
import { readdirSync, readFileSync } from "node:fs";
import { expect, test } from "vitest";

const DRIVER = new URL("../../src/drivers/postgres/", import.meta.url);
const MIGRATIONS = new URL("migrations/", DRIVER);
const FUNCTIONS = new URL("sql/functions/", DRIVER);

/** The `.sql` files of a folder, by name, with their text. */
function sqlFiles(dir: URL): Map<string, string> {
  const names = readdirSync(dir).filter((f) => f.endsWith(".sql"));
  return new Map(names.sort().map((f) => [f, readFileSync(new URL(f, dir), "utf8")]));
}

/** The SQL of a file without its `--` comments (bodies included: a comment may name a function). */
const code = (sql: string): string => sql.replace(/--.*$/gm, "");

/** The names a file defines with CREATE [OR REPLACE] FUNCTION or PROCEDURE. */
const defined = (sql: string): string[] =>
  [...code(sql).matchAll(/CREATE\s+(?:OR\s+REPLACE\s+)?(?:FUNCTION|PROCEDURE)\s+:"schema"\.(\w+)/gi)].map((m) => m[1]!);

/** The schema's functions a text calls: `:"schema".name(` in SQL, `${s}.name(` in the driver's statements. */
const called = (text: string): string[] => [...code(text).matchAll(/(?::"schema"|\$\{s\})\.(\w+)\(/g)].map((m) => m[1]!);

const migrations = sqlFiles(MIGRATIONS);
const functions = sqlFiles(FUNCTIONS);

test("migrations hold no function bodies", () => {
  expect(migrations.size).toBeGreaterThan(0);
  for (const [file, sql] of migrations) {
    expect(defined(sql), `${file} defines a function: put it in sql/functions/`).toEqual([]);
    expect(code(sql), `${file} has a dollar-quoted body`).not.toMatch(/\$[A-Za-z_]*\$/);
  }
});

test("each function is defined in exactly one file, named after it, with CREATE OR REPLACE and a comment", () => {
  expect(functions.size).toBeGreaterThan(0);
  const where = new Map<string, Set<string>>();
  for (const [file, sql] of [...migrations, ...functions]) {
    for (const name of defined(sql)) where.set(name, (where.get(name) ?? new Set()).add(file));
  }
  for (const [name, files] of where) expect([...files], `${name}()`).toEqual([`${name}.sql`]);
  for (const [file, sql] of functions) {
    const name = file.replace(/\.sql$/, "");
    expect(defined(sql), file).toContain(name);
    // More than one only while an old overload of the same name is kept for a rolling deploy.
    expect(new Set(defined(sql)), file).toEqual(new Set([name]));
    expect(code(sql), `${file}: use CREATE OR REPLACE, so a changed body applies in place`).not.toMatch(
      /CREATE\s+(?:FUNCTION|PROCEDURE)\b/i,
    );
    expect(sql, `${file} starts with its comment`).toMatch(/^-- \S/);
  }
});

test("every function called has its file, and every file is called", () => {
  const statements = readdirSync(DRIVER)
    .filter((f) => f.endsWith(".ts"))
    .map((f) => readFileSync(new URL(f, DRIVER), "utf8"));
  const triggers = [...migrations.values()].flatMap((sql) =>
    [...code(sql).matchAll(/EXECUTE\s+(?:FUNCTION|PROCEDURE)\s+:"schema"\.(\w+)\(/gi)].map((m) => m[1]!),
  );
  const names = new Set([...functions.keys()].map((f) => f.replace(/\.sql$/, "")));
  const callers = new Map<string, string[]>();
  const note = (name: string, by: string): void => void callers.set(name, [...(callers.get(name) ?? []), by]);
  for (const [file, sql] of functions) for (const name of called(sql)) if (`${name}.sql` !== file) note(name, file);
  for (const name of triggers) note(name, "a trigger");
  for (const text of statements) for (const name of called(text)) note(name, "the driver");
  for (const name of callers.keys())
    expect(names, `${name}() is called (by ${callers.get(name)!.join(", ")}) but has no file`).toContain(name);
  // A function the code no longer calls stays one release for processes of the previous one, its
  // file saying so (the rolling-deploy rule in docs/architecture.md); any other is dead.
  const kept = (name: string): boolean => /^-- Kept for the previous release\b/m.test(functions.get(`${name}.sql`)!);
  for (const name of names) {
    expect(callers.has(name) || kept(name), `${name}() is never called: drop it (see docs/architecture.md)`).toBe(true);
  }
});
