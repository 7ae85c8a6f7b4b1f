/**
 * Wake-ups of this process's workers of a pool when work may be ready. SQLite has no
 * notification between processes: workers elsewhere find new work by polling.
 */

/** The wake-up callbacks of each pool, and their calling once a write had the chance to commit. */
export class PoolWakeups {
  private readonly wakers = new Map<string, Set<() => void>>();

  /** Calls `onWake` when work of `pool` may be ready. Returns an unsubscribe function. */
  subscribe(pool: string, onWake: () => void): () => void {
    let set = this.wakers.get(pool);
    if (!set) this.wakers.set(pool, (set = new Set()));
    set.add(onWake);
    return () => set.delete(onWake);
  }

  /** Wakes the workers of the pools of `rows`, on a later microtask. */
  wakeSoon(rows: readonly { pool: string }[]): void {
    const pools = new Set(rows.map((r) => r.pool));
    // After the caller's synchronous transaction has had the chance to commit.
    queueMicrotask(() => {
      for (const pool of pools) for (const wake of this.wakers.get(pool) ?? []) wake();
    });
  }
}
