/**
 * How the SQLite driver's SQL becomes prepared statements, in one place. Each part of the
 * driver names its statements in a group of texts (`{ name: sql }`) next to the code that
 * runs them; a group is prepared on a connection the first time that connection asks for
 * it, and kept for the connection's life. A statement whose text is made at run time (an
 * admin listing's filters) is prepared once per connection and text.
 *
 * Lists of ids travel as one JSON array parameter (json_each), so one prepared statement
 * serves any batch size.
 */
import type { Database, Statement } from "better-sqlite3";

/** A group of statement texts, by name. */
export type SqlTexts = Readonly<Record<string, string>>;

/** A group's statements prepared on one connection, by name. */
export type Prepared<T extends SqlTexts> = { readonly [K in keyof T]: Statement };

/** Per connection: its prepared groups (keyed by the group object) and statements made at run time (keyed by text). */
const connections = new WeakMap<Database, Map<SqlTexts | string, Prepared<SqlTexts> | Statement>>();

function cacheOf(db: Database): Map<SqlTexts | string, Prepared<SqlTexts> | Statement> {
  let cache = connections.get(db);
  if (!cache) connections.set(db, (cache = new Map()));
  return cache;
}

/** The statements of `texts` on `db`, all prepared the first time the connection asks for the group. */
export function prepared<T extends SqlTexts>(db: Database, texts: T): Prepared<T> {
  const cache = cacheOf(db);
  let group = cache.get(texts) as Prepared<T> | undefined;
  if (!group) {
    const made: Record<string, Statement> = {};
    for (const [name, text] of Object.entries(texts)) made[name] = db.prepare(text);
    cache.set(texts, (group = made as Prepared<T>));
  }
  return group;
}

/** A statement whose text is made at run time, prepared once per connection and text. */
export function preparedText(db: Database, text: string): Statement {
  const cache = cacheOf(db);
  let stmt = cache.get(text) as Statement | undefined;
  if (!stmt) cache.set(text, (stmt = db.prepare(text)));
  return stmt;
}
