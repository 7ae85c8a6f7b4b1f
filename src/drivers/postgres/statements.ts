/**
 * How the PostgreSQL driver's SQL becomes named statements, in one place. Each part of the
 * driver builds its group of texts (`{ name: sql }`) from the quoted schema next to the
 * code that runs them; a group is built once per schema and process.
 *
 * - Each statement has a name derived from its text, so node-postgres prepares it once
 *   per connection (PostgreSQL parses and plans it once) and two stores with different
 *   schemas on one pg.Pool never collide.
 * - Lists travel as arrays: `= ANY($1::text[])` for ids, `unnest($1::text[], ...)` for
 *   rows, so a batch of any size is one statement and one round trip.
 * - Columns are listed explicitly (no `*`), so a prepared plan never changes shape.
 * - Statements that make work pending (insert, reschedule, release) send `pg_notify` in
 *   the same statement: the notification is delivered when, and only if, the
 *   transaction commits.
 */
import { createHash } from "node:crypto";
import { quoteIdent } from "./names.js";

/** A named SQL statement. */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

/** A group's statements, by name. */
export type Statements<T extends Record<string, string>> = { readonly [K in keyof T]: Statement };

const byText = new Map<string, Statement>();

/** `text` as a named statement (the same text, the same statement). */
export function named(text: string): Statement {
  let stmt = byText.get(text);
  if (!stmt) byText.set(text, (stmt = { name: `workpool_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`, text }));
  return stmt;
}

const groups = new Map<(s: string) => Record<string, string>, Map<string, Statements<Record<string, string>>>>();

/** The statements `build` makes from the quoted `schema`, built once per schema. */
export function statementsOf<T extends Record<string, string>>(schema: string, build: (s: string) => T): Statements<T> {
  let bySchema = groups.get(build);
  if (!bySchema) groups.set(build, (bySchema = new Map()));
  let group = bySchema.get(schema) as Statements<T> | undefined;
  if (!group) {
    const made: Record<string, Statement> = {};
    for (const [name, text] of Object.entries(build(quoteIdent(schema)))) made[name] = named(text);
    bySchema.set(schema, (group = made as Statements<T>));
  }
  return group;
}
