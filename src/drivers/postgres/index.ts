/**
 * `workpool/postgres`: the scale-out store. Any number of worker processes on any number
 * of machines share one PostgreSQL database, and each pool's maxParallelism holds across
 * all of them. Uses node-postgres (`pg`).
 */
import pg from "pg";
import type { Client, ClientConfig, Pool, PoolClient } from "pg";
import type { Store } from "../../driver/driver.js";
import { InvalidArgumentError } from "../../errors.js";
import { checkInt, checkOptionKeys, optionKeys } from "../../checks.js";
import { PostgresDriver } from "./driver.js";
import { checkSchemaName } from "./names.js";
import { vacuumSettings, type VacuumOptions } from "./vacuum.js";

export type { VacuumOptions } from "./vacuum.js";

/** Options of {@link postgresStore}: give `connectionString` or `pool`, not both. */
export interface PostgresStoreOptions {
  /** A `postgres://` URL. The store opens its own pg.Pool and ends it on close(). */
  connectionString?: string;
  /** A pg.Pool you own; the store uses it and never ends it. */
  pool?: Pool;
  /** Schema holding workpool's tables, created on first use. Default "workpool". */
  schema?: string;
  /**
   * How often idle workers look for work as a safety net, ms (LISTEN/NOTIFY wakes them
   * at once normally). Default 5000.
   */
  pollIntervalMs?: number;
  /**
   * Vacuuming of the work table by the maintenance leader, which checks the table's
   * dead-row count at most every `minIntervalMs` and runs `VACUUM` once it reaches
   * `minDeadRows` (and a tenth of the live rows). Claims slow down while dead index
   * entries pile up, and the server's autovacuum may be off or a minute behind a busy
   * queue. Needs the store's role to own the table; otherwise nothing is done. `false`
   * leaves vacuuming to the server. Default `{ minDeadRows: 10000, minIntervalMs: 2000 }`.
   */
  vacuum?: false | VacuumOptions;
  /**
   * How long opening a connection may take before it fails, ms (applied to the
   * connections the store opens: its own pool's and the LISTEN connection; a `pool` you
   * pass keeps its own `connectionTimeoutMillis`). A server that accepts the connection
   * but never answers would otherwise hang every call. Integer 1..600000. Default 10000.
   */
  connectTimeoutMs?: number;
}

/**
 * The type of a PostgreSQL store: its transaction handle is a pg `PoolClient` inside
 * BEGIN (mutation and onComplete handlers get it as `ctx.tx`).
 */
export type PostgresStore = Store<PoolClient> & {
  /** The pool the store runs on. */
  readonly pool: Pool;
  /** The schema holding the store's tables. */
  readonly schema: string;
};

/** Idle time before TCP keepalive probes start on connections the store opens, ms. */
const KEEPALIVE_DELAY_MS = 10_000;

/** Client constructor of a pool: pg-pool keeps the one it was built with (pg or pg-native). */
type ClientClass = new (config?: ClientConfig) => Client;

const OPTION_KEYS = optionKeys<PostgresStoreOptions>()({
  connectionString: true,
  pool: true,
  schema: true,
  pollIntervalMs: true,
  vacuum: true,
  connectTimeoutMs: true,
});

/** Default of the `connectTimeoutMs` option. */
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

function checkPollInterval(value: unknown): number {
  return value === undefined ? 5000 : checkInt("pollIntervalMs", value, 1, 600_000);
}

function isPool(value: unknown): value is Pool {
  const v = value as Partial<Pool> | null;
  return (
    typeof v === "object" && v !== null && typeof v.connect === "function" && typeof v.query === "function" && typeof v.options === "object"
  );
}

/**
 * Creates a PostgreSQL store. Nothing connects until first use; the schema is created or
 * upgraded then (or by `store.migrate()`). Call `close()` when done.
 */
export function postgresStore(options: PostgresStoreOptions): PostgresStore {
  if (typeof options !== "object" || options === null) {
    throw new InvalidArgumentError("options", "pass { connectionString } or { pool }");
  }
  checkOptionKeys("options", options, OPTION_KEYS, "postgresStore()");
  const { connectionString, pool: givenPool } = options;
  if ((connectionString === undefined) === (givenPool === undefined)) {
    throw new InvalidArgumentError("connectionString", "give exactly one of `connectionString` (a postgres:// URL) or `pool` (a pg.Pool)");
  }
  if (connectionString !== undefined && (typeof connectionString !== "string" || connectionString.length === 0)) {
    throw new InvalidArgumentError("connectionString", "must be a non-empty postgres:// URL string");
  }
  if (givenPool !== undefined && !isPool(givenPool)) {
    throw new InvalidArgumentError("pool", "must be a pg.Pool (new pg.Pool(...))");
  }
  const schema = checkSchemaName(options.schema ?? "workpool");
  const pollIntervalMs = checkPollInterval(options.pollIntervalMs);
  const connectTimeoutMs =
    options.connectTimeoutMs === undefined
      ? DEFAULT_CONNECT_TIMEOUT_MS
      : checkInt("connectTimeoutMs", options.connectTimeoutMs, 1, 600_000);
  const vacuum = vacuumSettings(options.vacuum);

  let pool: Pool;
  let listenConfig: ClientConfig;
  let ListenClient: ClientClass;
  if (givenPool !== undefined) {
    pool = givenPool;
    listenConfig = { connectionTimeoutMillis: connectTimeoutMs, ...givenPool.options };
    ListenClient = (givenPool as unknown as { Client?: ClientClass }).Client ?? pg.Client;
  } else {
    listenConfig = { connectionString, connectionTimeoutMillis: connectTimeoutMs };
    ListenClient = pg.Client;
    pool = new pg.Pool({
      connectionString,
      connectionTimeoutMillis: connectTimeoutMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
      allowExitOnIdle: true,
    });
    // An idle connection that dies (server restart, terminated backend) is reported on
    // the pool; the pool has already discarded it and opens a new one when needed.
    // Without a listener Node would treat the event as fatal.
    pool.on("error", () => undefined);
  }
  return new PostgresDriver({
    pool,
    ownsPool: givenPool === undefined,
    // TCP keepalive, so a LISTEN connection cut without a reset (a dead network path) is
    // noticed and reopened instead of silently waiting forever.
    newListenClient: () => new ListenClient({ ...listenConfig, keepAlive: true, keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS }),
    schema,
    pollIntervalMs,
    vacuum,
    connectTimeoutMs: givenPool === undefined || givenPool.options.connectionTimeoutMillis === undefined ? connectTimeoutMs : null,
  });
}
