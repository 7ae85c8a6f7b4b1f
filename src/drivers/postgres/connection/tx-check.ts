/**
 * Checks an enqueue's `tx` before anything is written: it must be a pg client (not a
 * Pool, not a look-alike) inside an open transaction on the store's database. Anything
 * else would commit the work outside the caller's transaction (a Pool, a client with no
 * BEGIN), write it where no worker looks (another database), or not write it at all.
 *
 * Whether a client is inside a transaction is what the server says after every command
 * (the ReadyForQuery status). The first time a client is seen, one query reads its
 * database and server and starts following that status; later enqueues on the same
 * client need no extra round trip. A client without that event (pg-native) is probed
 * with a SAVEPOINT, which only a transaction block accepts. A transaction executor (an
 * ORM's transaction, see driver/tx-executor.ts) is checked the same way through itself.
 */
import type { PoolClient } from "pg";
import { isTransactionExecutor, type TransactionExecutor } from "../../../driver/tx-executor.js";
import { InvalidArgumentError } from "../../../errors.js";
import { describeValue } from "../../../checks.js";
import type { Queryable } from "../connection.js";
import { checkExecutorInTransaction, executorQueryable, readExecutorIdentity } from "./tx-executor-check.js";

/** The database and server a connection is on: the same pair means the same database. */
interface Identity {
  database: string;
  serverStartedAt: string;
}

interface Followed {
  identity: Identity;
  /** The last transaction status the server reported: I idle, T in a transaction, E failed transaction. */
  status: string | null;
}

type EmitterLike = { on(event: string, listener: (message: { status?: unknown }) => void): unknown };

const IDENTITY_SQL = "SELECT current_database() AS database, pg_postmaster_start_time()::text AS started";

/** Anything with pg's `query(text)`: a client, a pool, or a look-alike being checked. */
type TextQueryable = { query(text: string): Promise<unknown> };

/** Sends one simple query on `db` and reads its identity row; null when the answer is not one. */
async function readIdentity(db: TextQueryable): Promise<Identity | null> {
  const res = (await db.query(IDENTITY_SQL)) as { rows?: unknown } | undefined;
  const row = Array.isArray(res?.rows) ? (res.rows[0] as { database?: unknown; started?: unknown } | undefined) : undefined;
  if (typeof row?.database !== "string" || typeof row.started !== "string") return null;
  return { database: row.database, serverStartedAt: row.started };
}

function looksLikePool(value: object): boolean {
  const v = value as Record<string, unknown>;
  return typeof v.totalCount === "number" && typeof v.idleCount === "number" && typeof v.connect === "function";
}

function notAClient(value: unknown): InvalidArgumentError {
  return new InvalidArgumentError(
    "tx",
    `must be a pg client (from pool.connect() or new pg.Client()) inside the caller's BEGIN, or an ORM transaction wrapped by an adapter (workpool/drizzle, workpool/kysely, ...), got ${describeValue(value)}`,
  );
}

function failedTransaction(): InvalidArgumentError {
  return new InvalidArgumentError("tx", "is in a failed transaction (an earlier statement in it errored); roll it back");
}

/** Validates `tx` values for one store. */
export class TxChecker {
  private readonly followed = new WeakMap<object, Followed>();
  private readonly executors = new WeakMap<TransactionExecutor, Identity>();
  private storeIdentity: Promise<Identity | null> | null = null;

  /** @param store where the store's own statements run, to learn its database and server */
  constructor(private readonly store: TextQueryable) {}

  /** Resolves with where to write through `tx` once it is known to be fit; rejects with an InvalidArgumentError naming `tx`. */
  async check(tx: unknown): Promise<Queryable> {
    if (isTransactionExecutor(tx)) return this.checkExecutor(tx);
    if (typeof tx !== "object" || tx === null || typeof (tx as { query?: unknown }).query !== "function") throw notAClient(tx);
    if (looksLikePool(tx)) {
      throw new InvalidArgumentError(
        "tx",
        "is a pg.Pool, whose queries each commit on their own; pass a client from pool.connect() after BEGIN",
      );
    }
    const client = tx as PoolClient;
    const known = this.followed.get(client) ?? (await this.follow(client));
    await this.checkSameDatabase(known.identity);
    const status = known.status ?? (await probeTransaction(client));
    if (status === "E") throw failedTransaction();
    if (status !== "T")
      throw new InvalidArgumentError("tx", "has no open transaction; run BEGIN on it first, or leave tx out to commit the work at once");
    return client;
  }

  private async checkExecutor(executor: TransactionExecutor): Promise<Queryable> {
    const identity = this.executors.get(executor) ?? (await readExecutorIdentity(executor));
    this.executors.set(executor, identity);
    await this.checkSameDatabase(identity);
    await checkExecutorInTransaction(executor);
    return executorQueryable(executor);
  }

  /** Reads a new client's identity and, where the client allows, follows its transaction status. */
  private async follow(client: PoolClient): Promise<Followed> {
    const entry: Followed = { identity: { database: "", serverStartedAt: "" }, status: null };
    const connection = (client as unknown as { connection?: EmitterLike }).connection;
    const canFollow = typeof connection === "object" && connection !== null && typeof connection.on === "function";
    if (canFollow) {
      // Our listener runs right after the client's own, before the query's promise settles.
      connection.on("readyForQuery", (message) => {
        entry.status = typeof message?.status === "string" ? message.status : null;
      });
    }
    let identity: Identity | null;
    try {
      identity = await readIdentity(client);
    } catch (e) {
      const code = (e as { code?: unknown } | null)?.code;
      if (code === "25P02") throw failedTransaction();
      // The server answered with another error: pass it on as it is.
      if (typeof code === "string") throw e;
      throw notAClient(client);
    }
    if (!identity) throw notAClient(client);
    entry.identity = identity;
    if (canFollow) this.followed.set(client, entry);
    return entry;
  }

  private async checkSameDatabase(theirs: Identity): Promise<void> {
    let ours = await this.readStoreIdentity();
    // The server may have restarted since the store looked: look once more before refusing.
    if (ours && ours.database === theirs.database && ours.serverStartedAt !== theirs.serverStartedAt) {
      this.storeIdentity = null;
      ours = await this.readStoreIdentity();
    }
    if (!ours || ours.database !== theirs.database || ours.serverStartedAt !== theirs.serverStartedAt) {
      const where =
        ours && ours.database !== theirs.database
          ? `database "${theirs.database}", but this store uses "${ours.database}"`
          : "another server than this store's";
      throw new InvalidArgumentError("tx", `is a client of ${where}; pass a client of the store's database`);
    }
  }

  private readStoreIdentity(): Promise<Identity | null> {
    this.storeIdentity ??= readIdentity(this.store).catch((e: unknown) => {
      this.storeIdentity = null;
      throw e;
    });
    return this.storeIdentity;
  }
}

/** For clients whose status cannot be followed: SAVEPOINT succeeds only inside a transaction block. */
async function probeTransaction(client: PoolClient): Promise<string> {
  try {
    await client.query("SAVEPOINT workpool_tx_check; RELEASE SAVEPOINT workpool_tx_check");
    return "T";
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code === "25P01") return "I";
    if (code === "25P02") return "E";
    throw e;
  }
}
