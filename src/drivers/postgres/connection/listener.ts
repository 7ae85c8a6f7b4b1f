/**
 * Wake-ups across processes: one dedicated LISTEN connection per store. Statements that
 * make work pending send `pg_notify(channel, poolName)` in their transaction; every
 * store listening on the channel calls its subscribers for that pool once it commits.
 *
 * - The connection is opened on the first subscription and closed after the last one
 *   goes, so a store whose workers are stopped holds no idle LISTEN session.
 * - If the connection drops (server restart, terminated backend, network), it is opened
 *   again with backoff. Notifications sent meanwhile are lost, so every subscriber is
 *   woken once LISTEN is back; the worker's safety poll covers the rest.
 * - Bursts are coalesced per pool: the first notification wakes at once, more within
 *   {@link WAKE_DEBOUNCE_MS} produce one more wake at the end of that window.
 */
import type { Client, Notification } from "pg";
import { quoteIdent } from "../names.js";

/** Shortest time between two wake calls of one pool, ms. */
export const WAKE_DEBOUNCE_MS = 5;
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5000;

interface Debounce {
  timer: ReturnType<typeof setTimeout> | null;
  again: boolean;
}

/** The LISTEN side of one store. */
export class Listener {
  private readonly subscribers = new Map<string, Set<() => void>>();
  private readonly debounce = new Map<string, Debounce>();
  /** The current connection, from connect() until it drops or is closed. */
  private client: Client | null = null;
  /** Settles when the current connect-and-LISTEN attempt has finished (either way). */
  private connecting: Promise<void> | null = null;
  /** Counts connect attempts, to tell the current one from older ones. */
  private attempts = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  private failures = 0;
  private closed = false;
  /** The last connection error, for diagnostics. */
  lastError: Error | null = null;
  /** How many times LISTEN was (re)established; for tests and diagnostics. */
  connects = 0;

  /**
   * @param newClient makes an unconnected client with the store's connection settings
   * @param channel the channel to LISTEN on
   */
  constructor(
    private readonly newClient: () => Client,
    private readonly channel: string,
  ) {}

  /** Calls `onWake` when work of `pool` may be ready. Returns an unsubscribe function. */
  subscribe(pool: string, onWake: () => void): () => void {
    let set = this.subscribers.get(pool);
    if (!set) this.subscribers.set(pool, (set = new Set()));
    set.add(onWake);
    this.ensureConnected();
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      set.delete(onWake);
      if (set.size === 0) this.subscribers.delete(pool);
      if (this.subscribers.size === 0) void this.disconnect();
    };
  }

  /** True while LISTEN is established. */
  get listening(): boolean {
    return this.client !== null && this.connecting === null;
  }

  /** Closes the connection for good. */
  async close(): Promise<void> {
    this.closed = true;
    this.subscribers.clear();
    for (const d of this.debounce.values()) if (d.timer) clearTimeout(d.timer);
    this.debounce.clear();
    await this.disconnect();
  }

  private ensureConnected(): void {
    if (this.closed || this.client || this.reconnectTimer) return;
    const client = this.newClient();
    this.client = client;
    const dropped = (e?: Error): void => this.onDrop(client, e);
    client.on("error", dropped);
    client.on("end", () => dropped());
    client.on("notification", (msg: Notification) => this.onNotification(msg));
    const attempt = ++this.attempts;
    this.connecting = (async () => {
      try {
        await client.connect();
        await client.query(`LISTEN ${quoteIdent(this.channel)}`);
        if (this.client !== client) return;
        this.failures = 0;
        this.connects++;
        // Anything sent before LISTEN took effect was missed: wake everyone once.
        for (const pool of this.subscribers.keys()) this.wake(pool);
      } catch (e) {
        this.onDrop(client, e instanceof Error ? e : new Error(String(e)));
      } finally {
        // A newer attempt may have started meanwhile (disconnect, then subscribe again).
        if (this.attempts === attempt) this.connecting = null;
      }
    })();
  }

  private onDrop(client: Client, e?: Error): void {
    if (e) this.lastError = e;
    if (this.client !== client) return;
    this.client = null;
    // end() on a dead connection can still reject; nothing more to do with it.
    client.end().catch(() => undefined);
    if (this.closed || this.subscribers.size === 0) return;
    const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** Math.min(this.failures, 10)) * (0.5 + Math.random());
    this.failures++;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (this.subscribers.size) this.ensureConnected();
    }, delay);
    this.reconnectTimer.unref();
  }

  private async disconnect(): Promise<void> {
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const client = this.client;
    this.client = null;
    this.failures = 0;
    if (!client) return;
    await this.connecting;
    await client.end().catch(() => undefined);
  }

  /**
   * Wakes this store's subscribers of `pool` as a notification would (debounced alike),
   * for work this process knows it has just committed.
   */
  wakeLocal(pool: string): void {
    this.wake(pool);
  }

  private onNotification(msg: Notification): void {
    if (msg.channel !== this.channel || msg.payload === undefined) return;
    this.wake(msg.payload);
  }

  private wake(pool: string): void {
    if (!this.subscribers.has(pool)) return;
    let d = this.debounce.get(pool);
    if (!d) this.debounce.set(pool, (d = { timer: null, again: false }));
    if (d.timer) {
      d.again = true;
      return;
    }
    for (const fn of this.subscribers.get(pool) ?? []) {
      try {
        fn();
      } catch {
        // A subscriber's failure must not stop the others (the worker's wake never throws).
      }
    }
    const state = d;
    state.timer = setTimeout(() => {
      state.timer = null;
      if (state.again) {
        state.again = false;
        this.wake(pool);
      } else {
        this.debounce.delete(pool);
      }
    }, WAKE_DEBOUNCE_MS);
    state.timer.unref();
  }
}
