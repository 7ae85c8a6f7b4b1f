/**
 * Names the PostgreSQL driver derives from its schema: the quoted schema identifier used
 * in every statement, and the NOTIFY channel. The schema is checked before it is ever
 * put into SQL, and it is always quoted, so it cannot inject anything.
 */
import { InvalidArgumentError } from "../../errors.js";

/** Longest schema name accepted: the channel `workpool_<schema>` must fit PostgreSQL's 63-byte identifier limit. */
export const MAX_SCHEMA_LENGTH = 54;

const SCHEMA_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Validates a schema name (letters, digits, underscore; not starting with a digit; 1 to 54 characters). */
export function checkSchemaName(value: unknown): string {
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_SCHEMA_LENGTH || !SCHEMA_PATTERN.test(value)) {
    throw new InvalidArgumentError(
      "schema",
      `must be 1 to ${MAX_SCHEMA_LENGTH} characters of letters, digits and _, not starting with a digit, got ${typeof value === "string" ? JSON.stringify(value) : String(value)}`,
    );
  }
  if (value.toLowerCase().startsWith("pg_")) {
    throw new InvalidArgumentError("schema", `must not start with "pg_" (reserved by PostgreSQL), got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Quotes an identifier for SQL. Only ever called on names that passed {@link checkSchemaName}. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The LISTEN/NOTIFY channel of a schema; the payload of each notification is a pool name. */
export function channelName(schema: string): string {
  return `workpool_${schema}`;
}
