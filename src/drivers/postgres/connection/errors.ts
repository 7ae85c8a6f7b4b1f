import { errorText } from "../../../error-text.js";

/**
 * The PostgreSQL store's own errors, and how it tells errors about the connection or the
 * server (the same write may succeed later) from errors about what was written.
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

/** The error of a first use that could not reach the server: what failed, and the timeout that applied. */
export function connectError(cause: unknown, timeoutMs: number | null): Error {
  const limit = timeoutMs === null ? "the given pool's connectionTimeoutMillis" : `${timeoutMs} ms, the store's connectTimeoutMs option`;
  return new Error(`workpool: could not reach PostgreSQL to open the store: ${errorText(cause)} (a connection must open within ${limit})`, {
    cause,
  });
}

/** The error of any call on a store after close(). */
export function closedError(): Error {
  return new Error("workpool: this PostgreSQL store is closed (close() was called); create a new store");
}
