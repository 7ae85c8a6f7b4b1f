/**
 * Connection handling shared by the PostgreSQL driver: running a statement, and running
 * a function in one transaction on a client checked out of the pool.
 */
import type { Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from "pg";
import type { Statement } from "./statements.js";

/**
 * Anything that runs queries: the pool or its held client (autocommit, see pinned.ts),
 * or a client inside BEGIN.
 */
export interface Queryable {
  query<R extends QueryResultRow>(config: QueryConfig): Promise<QueryResult<R>>;
}

/** Runs a prepared statement (named, so PostgreSQL parses and plans it once per connection). */
export async function run<R extends QueryResultRow>(
  db: Queryable,
  stmt: Statement,
  values: unknown[],
): Promise<{ rows: R[]; rowCount: number }> {
  const res = await db.query<R>({ name: stmt.name, text: stmt.text, values });
  return { rows: res.rows, rowCount: res.rowCount ?? 0 };
}

/**
 * Checks a client out of `pool`, runs `fn(client)` inside BEGIN, and COMMITs if it
 * resolves or ROLLBACKs if it throws. The client always goes back to the pool; it is
 * destroyed instead when its connection failed, so the pool opens a fresh one.
 */
export async function inTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // While a client is checked out the pool listens to none of its events; a connection
  // that drops while the transaction awaits a handler would otherwise emit an unhandled
  // 'error' and end the process. Queries in flight reject on their own.
  const onError = (e: Error): void => {
    broken ??= e;
  };
  client.on("error", onError);
  try {
    await client.query("BEGIN");
    try {
      const result = await fn(client);
      await client.query("COMMIT");
      return result;
    } catch (e) {
      try {
        await client.query("ROLLBACK");
      } catch (rollbackError) {
        broken ??= rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      }
      throw e;
    }
  } finally {
    client.off("error", onError);
    client.release(broken);
  }
}
