/**
 * A connection kept checked out of the pool for the driver's autocommit statements.
 *
 * Why: `pool.query()` checks a client out and back in around every statement. On the
 * path an app enqueuing one job at a time waits on, that bookkeeping (idle timers,
 * socket ref/unref, events) cost 3–7 % of the enqueue rate, measured side by side
 * against a client held the whole time. So the driver holds one client while
 * statements keep coming:
 * - a statement runs on the held client if it is free, otherwise through the pool as
 *   before, so concurrent statements never queue behind each other;
 * - the client is only taken while the pool has a free connection and nobody waits for
 *   one, and is given back as soon as someone waits, before a transaction's checkout
 *   when the pool has no other to spare ({@link PinnedConnection.makeRoom}), after
 *   {@link PINNED_IDLE_MS} without a statement, when its connection fails, and at close().
 *
 * Statements run here must not leave state on the session (no BEGIN, SET, LISTEN):
 * every one is a single autocommit statement, as through the pool.
 */
import type { Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from "pg";

/** How long the held client may sit unused before it goes back to the pool, ms. */
export const PINNED_IDLE_MS = 100;

/** Default `max` of a pg.Pool, for a pool whose options do not say. */
const PG_POOL_DEFAULT_MAX = 10;

/** Runs autocommit statements on a held client when it is free, else on the pool. */
export class PinnedConnection {
  private client: PoolClient | null = null;
  /** The pending checkout of a client to hold, if any. */
  private acquiring: Promise<void> | null = null;
  private busy = false;
  /** Set by the held client's 'error' or 'end': it goes back to be destroyed. */
  private broken: Error | null = null;
  private closed = false;
  private lastUsed = 0;
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly onFailure = (e?: unknown): void => {
    this.broken ??= e instanceof Error ? e : new Error("workpool: connection ended");
    if (!this.busy) this.giveBack();
  };

  /**
   * @param pool the pool to hold a client of
   * @param now a monotonic clock in ms (tests pass their own)
   */
  constructor(
    private readonly pool: Pool,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Runs one statement: on the held client if it is free, else through the pool. */
  async query<R extends QueryResultRow>(config: QueryConfig): Promise<QueryResult<R>> {
    const client = this.client;
    if (client === null || this.busy) {
      if (client === null) this.pinSoon();
      return this.pool.query<R>(config);
    }
    this.busy = true;
    try {
      return await client.query<R>(config);
    } catch (e) {
      // An ERROR the server answered with (a constraint, a bad value) leaves the session
      // usable; a FATAL one (the session was terminated) or any other failure (the
      // connection dropped or was closed) does not.
      if (!keepsSession(e)) this.broken ??= e instanceof Error ? e : new Error(String(e));
      throw e;
    } finally {
      this.busy = false;
      this.lastUsed = this.now();
      if (this.broken || this.closed || this.pool.waitingCount > 0) this.giveBack();
    }
  }

  /** True while a client is held; for tests and diagnostics. */
  get holding(): boolean {
    return this.client !== null;
  }

  /** Resolves once a checkout begun by an earlier statement has settled; for tests. */
  async settled(): Promise<void> {
    await this.acquiring;
  }

  /**
   * Gives the held client back if no statement used it for {@link PINNED_IDLE_MS}, else
   * checks again when that time is up. Called by its timer; tests call it directly.
   */
  checkIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.client === null) return;
    const idle = this.now() - this.lastUsed;
    if (this.busy || idle < PINNED_IDLE_MS) this.armIdle(Math.max(1, PINNED_IDLE_MS - idle));
    else this.giveBack();
  }

  /**
   * Gives the held client back now if it is idle and the pool has no other connection to
   * spare: called before checking out a client for a transaction, which would otherwise
   * wait for the idle timer.
   */
  makeRoom(): void {
    if (this.client !== null && !this.busy && !this.poolHasRoom()) this.giveBack();
  }

  /** Gives the held client back (now, or when its statement finishes) and holds no more. */
  close(): void {
    this.closed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (!this.busy) this.giveBack();
  }

  /** Takes a client for the next statements, if the pool can spare one without anyone waiting. */
  private pinSoon(): void {
    if (this.acquiring !== null || this.closed || !this.poolHasRoom()) return;
    this.acquiring = this.pool.connect().then(
      (client) => {
        this.acquiring = null;
        if (this.closed || this.pool.waitingCount > 0) {
          client.release();
          return;
        }
        this.client = client;
        this.broken = null;
        this.lastUsed = this.now();
        // A checked-out client's events are nobody's: without a listener a dropped
        // connection would be an unhandled 'error' and end the process.
        client.on("error", this.onFailure);
        client.on("end", this.onFailure);
        this.armIdle(PINNED_IDLE_MS);
      },
      () => {
        // The pool could not connect; statements keep going through the pool, which
        // reports the failure to them.
        this.acquiring = null;
      },
    );
  }

  private poolHasRoom(): boolean {
    const p = this.pool;
    const max = (p.options as { max?: number } | undefined)?.max ?? PG_POOL_DEFAULT_MAX;
    return p.waitingCount === 0 && (p.idleCount > 0 || p.totalCount < max);
  }

  /** One timer per hold, re-armed for the rest of the idle time instead of per statement. */
  private armIdle(delay: number): void {
    this.idleTimer = setTimeout(() => this.checkIdle(), delay);
    // The held client's socket keeps the process alive until the timer gives it back.
    this.idleTimer.unref?.();
  }

  private giveBack(): void {
    const client = this.client;
    if (client === null) return;
    this.client = null;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    client.off("error", this.onFailure);
    client.off("end", this.onFailure);
    // With an error the pool destroys the client instead of reusing it.
    client.release(this.broken ?? undefined);
    this.broken = null;
  }
}

/**
 * True for an error PostgreSQL sent that ends the statement, not the session: it has a
 * SQLSTATE, is not FATAL or PANIC, and is not of the classes a terminated session or a
 * lost connection reports (57P operator intervention, 08 connection exception).
 */
function keepsSession(e: unknown): boolean {
  if (typeof e !== "object" || e === null) return false;
  const { code, severity } = e as { code?: unknown; severity?: unknown };
  if (typeof code !== "string" || code.startsWith("57P") || code.startsWith("08")) return false;
  return severity !== "FATAL" && severity !== "PANIC";
}
