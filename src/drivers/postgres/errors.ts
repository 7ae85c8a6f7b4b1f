/**
 * How the PostgreSQL store tells errors about the connection or the server (the same
 * write may succeed later) from errors about what was written.
 */

/** SQLSTATE classes and codes of conditions that pass: connection, shutdown, resources, lock conflicts. */
const TRANSIENT_SQLSTATE = /^(08|53|57P0[1-3]|40001|40P01|55P03|58)/;

/** Error codes of Node's network layer. */
const TRANSIENT_NODE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/** Messages of node-postgres and of this store for a connection that is gone or never came. */
const TRANSIENT_MESSAGES =
  /Connection terminated|connection error|timeout exceeded when trying to connect|not queryable|Client was closed|store is closed|could not connect/i;

/** Whether `e` says the database could not be reached or was busy, rather than that the data was refused. */
export function isTransientPgError(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === "string" && (TRANSIENT_SQLSTATE.test(code) || TRANSIENT_NODE_CODES.has(code))) return true;
  return e instanceof Error && TRANSIENT_MESSAGES.test(e.message);
}
