/**
 * The PostgreSQL driver: a pg.Pool for statements and transactions, plus one LISTEN
 * connection for wake-ups.
 *
 * Why it is shaped this way:
 * - The global maxParallelism is enforced in `claim`, a function in the schema run in one
 *   transaction: it locks the pool's row (FOR UPDATE), so claims of one pool run one at a
 *   time across every process, then counts running work and takes at most the free
 *   slots with FOR UPDATE SKIP LOCKED.
 * - Everything that can be one statement is one statement in autocommit (claim, enqueue,
 *   heartbeat, leadership, reads); batches are arrays, never one statement per row.
 * - Transactions that await handlers hold their own client; the rest of the driver keeps
 *   working on other connections of the pool meanwhile.
 * - Calls a handler makes to the pool from inside its transaction (a mutation calling
 *   `pool.status`, `pool.cancel`, enqueue without `tx`) run on that transaction's client,
 *   as the SQLite store does: they see and join the handler's writes, and cannot wait on
 *   the handler's own row locks (which would never be released) or on a free connection.
 * - Connection faults surface as rejected promises. The core retries claims, result
 *   writes and heartbeats with backoff; the pool replaces dead connections; the
 *   listener reconnects by itself.
 *
 * The driver holds one object per noun of the interface (work.ts, pools.ts, schedules.ts,
 * admin.ts); NounDelegation hands the pool, schedule and admin calls to theirs; the connections they run on are in connection/.
 */
import { PgAttemptOutput } from "./attempt-output.js";
import { NounDelegation } from "../../driver/noun-delegation.js";
import type { Client, Pool, PoolClient } from "pg";
import {
  DRIVER,
  type AttemptOutputRow,
  type AttemptOutputWrite,
  type AttemptRef,
  type CancelableFilter,
  type ClaimOptions,
  type ClaimResult,
  type CompleteResult,
  type CompletionWrite,
  type Driver,
  type HeartbeatResult,
  type LeaseRenewal,
  type NewWork,
  type Store,
  type TxOps,
  type WorkRow,
} from "../../driver/driver.js";
import { RunningWorkers } from "../../driver/running-workers.js";
import type { WorkflowOps } from "../../driver/workflow-ops.js";
import { PgWorkflows } from "./workflows.js";
import type { TransactionExecutor } from "../../driver/tx-executor.js";
import { PgAdmin } from "./admin.js";
import { PgRedrive } from "./redrive.js";
import { ClaimKeys } from "./claim.js";
import { run } from "./connection.js";
import { PgConnections } from "./connection/connections.js";
import { isTransientPgError } from "./connection/errors.js";
import { PgStoreLifecycle } from "./connection/lifecycle.js";
import { Listener } from "./connection/listener.js";
import { NOTIFY, Notifier } from "./connection/notifier.js";
import { PinnedConnection } from "./connection/pinned.js";
import { PgTransactions } from "./connection/transactions.js";
import { TxChecker } from "./connection/tx-check.js";
import { PgWorkInserter } from "./insert.js";
import { channelName, quoteIdent } from "./names.js";
import { PgPools } from "./pools.js";
import { PgSchedules } from "./schedules.js";
import { PgTxOps } from "./tx-ops.js";
import { Vacuumer, type VacuumSettings } from "./vacuum.js";
import { PgWork } from "./work.js";

/** What the driver needs to run. */
export interface PostgresDriverConfig {
  /** The connection pool for statements and transactions. */
  pool: Pool;
  /** Whether close() ends `pool` (true when the store created it). */
  ownsPool: boolean;
  /** Makes an unconnected client with the pool's settings, for LISTEN. */
  newListenClient: () => Client;
  /** Schema holding the tables (already validated). */
  schema: string;
  /** Safety-poll interval, ms. */
  pollIntervalMs: number;
  /** When the maintenance leader vacuums the work table; null: never. */
  vacuum: VacuumSettings | null;
  /** The connect timeout the store set on its connections, ms; null when the given pool has its own. */
  connectTimeoutMs: number | null;
}

/** The PostgreSQL implementation of the driver interface; also the Store users hold. */
export class PostgresDriver extends NounDelegation implements Driver<PoolClient>, Store<PoolClient> {
  readonly dialect = "postgres";
  readonly synchronousTx = false;
  readonly [DRIVER]: Driver<PoolClient> = this;
  /** The pool the store runs on. */
  readonly pool: Pool;
  /** Schema holding the store's tables. */
  readonly schema: string;
  readonly pollIntervalMs: number;
  /** Two completion batches in flight: see Driver.completionLanes. */
  readonly completionLanes = 2;
  readonly workers = new RunningWorkers();
  /** The LISTEN side of the store (exposed for diagnostics and tests). */
  readonly listener: Listener;
  /** The NOTIFY side: coalesces the wake-ups of back-to-back enqueues. */
  readonly notifier: Notifier;
  /** Migrate and close, and the connections statements run on while the store is open. */
  private readonly lifecycle: PgStoreLifecycle;
  private readonly work: PgWork;
  protected readonly pools: PgPools;
  protected readonly schedules: PgSchedules;
  protected readonly admin: PgAdmin;
  private readonly output: PgAttemptOutput;
  protected readonly redrives: PgRedrive;
  private readonly flows: PgWorkflows;

  constructor(config: PostgresDriverConfig) {
    super();
    const { schema } = config;
    this.pool = config.pool;
    this.schema = schema;
    this.pollIntervalMs = config.pollIntervalMs;
    const channel = channelName(schema);
    this.listener = new Listener(config.newListenClient, channel);
    this.notifier = new Notifier(
      async (pool) => {
        await run(this.pool, NOTIFY, [channel, pool]);
      },
      (pool) => this.listener.wakeLocal(pool),
    );
    const pinned = new PinnedConnection(config.pool);
    this.lifecycle = new PgStoreLifecycle({ ...config, pinned, listener: this.listener, notifier: this.notifier, workers: this.workers });
    const claimKeys = new ClaimKeys();
    const transactions = new PgTransactions((client) => new PgTxOps(client, schema, channel, claimKeys));
    const conn = new PgConnections(this.lifecycle, transactions);
    const inserter = new PgWorkInserter(schema, channel, this.notifier, new TxChecker(config.pool), this.lifecycle, transactions);
    const vacuumer = config.vacuum ? new Vacuumer(`${quoteIdent(schema)}.work`, config.vacuum) : null;
    this.work = new PgWork({ schema, channel, conn, transactions, inserter, claimKeys, vacuumer });
    this.pools = new PgPools(schema, channel, conn);
    this.schedules = new PgSchedules(schema, channel, conn);
    this.admin = new PgAdmin(schema, channel, conn);
    this.redrives = new PgRedrive(schema, channel, conn);
    this.flows = new PgWorkflows(schema, conn);
    this.output = new PgAttemptOutput(schema, conn);
  }

  // The store as a whole.

  /** Closes the LISTEN connection and, if the store created it, the pool. Idempotent. */
  close(): Promise<void> {
    return this.lifecycle.close();
  }

  isTransientError(e: unknown): boolean {
    return isTransientPgError(e);
  }

  /** Creates or upgrades the schema. Runs once per store; a failed run is retried on the next call. */
  migrate(): Promise<void> {
    return this.lifecycle.migrate();
  }

  subscribe(pool: string, onWake: () => void): () => void {
    if (this.lifecycle.closed) return () => undefined;
    return this.listener.subscribe(pool, onWake);
  }

  // WorkOps (work.ts).

  claim(pool: string, opts: ClaimOptions): Promise<ClaimResult> {
    return this.work.claim(pool, opts);
  }

  complete(pool: string, writes: readonly CompletionWrite[], now: number, claim: ClaimOptions | null): Promise<CompleteResult> {
    return this.work.complete(pool, writes, now, claim);
  }

  deleteFinishedBefore(pool: string, before: number, limit: number): Promise<number> {
    return this.work.deleteFinishedBefore(pool, before, limit);
  }

  deleteFinishedIds(pool: string, ids: readonly string[]): Promise<string[]> {
    return this.work.deleteFinishedIds(pool, ids);
  }

  heartbeat(pool: string, workerId: string, refs: readonly AttemptRef[], lease: LeaseRenewal): Promise<HeartbeatResult> {
    return this.work.heartbeat(pool, workerId, refs, lease);
  }

  insertAndClaim(row: NewWork, claim: ClaimOptions): Promise<WorkRow | null> {
    return this.work.insertAndClaim(row, claim);
  }

  insertWork(rows: readonly NewWork[], tx?: PoolClient | TransactionExecutor): Promise<string[]> {
    return this.work.insertWork(rows, tx);
  }

  listCancelable(pool: string, before: number, limit: number, filter?: CancelableFilter): Promise<string[]> {
    return this.work.listCancelable(pool, before, limit, filter);
  }

  readWork(pool: string, ids: readonly string[]): Promise<WorkRow[]> {
    return this.work.readWork(pool, ids);
  }

  transaction<T>(fn: (ops: TxOps<PoolClient>) => Promise<T>): Promise<T> {
    return this.work.transaction(fn);
  }

  vacuum(now: number): Promise<boolean> {
    return this.work.vacuum(now);
  }

  // Attempt output (attempt-output.ts).

  writeAttemptOutput(pool: string, workerId: string, writes: readonly AttemptOutputWrite[], now: number): Promise<AttemptRef[]> {
    return this.output.writeAttemptOutput(pool, workerId, writes, now);
  }

  readAttemptOutput(ids: readonly string[]): Promise<AttemptOutputRow[]> {
    return this.output.readAttemptOutput(ids);
  }

  readWorkWithProgress(pool: string, ids: readonly string[]): Promise<{ row: WorkRow; progress: string | null }[]> {
    return this.output.readWorkWithProgress(pool, ids);
  }

  // Workflows.

  workflows(tx?: PoolClient): WorkflowOps {
    return this.flows.workflows(tx);
  }
}
