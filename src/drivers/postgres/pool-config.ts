/**
 * A pool's stored configuration on PostgreSQL: seeded on first use, overridden by what the
 * application set explicitly, and read back. A changed limit wakes every process's
 * workers of the pool.
 */
import type { PoolConfig } from "../../driver/driver.js";
import { run, type Queryable } from "./connection.js";
import { toPoolConfig, type PgPoolRow } from "./rows.js";
import type { Statements } from "./statements.js";

/**
 * Seeds the pool's row if it has none, applies `overrides` and returns the stored config.
 * `db` is asked again for each statement, so a store closed in between refuses the rest.
 */
export async function ensurePoolOn(
  db: () => Queryable,
  stmts: Statements,
  channel: string,
  pool: string,
  seed: PoolConfig,
  overrides: Partial<PoolConfig>,
): Promise<PoolConfig> {
  const { rows } = await run<PgPoolRow>(db(), stmts.upsertPool, [
    pool,
    seed.maxParallelism,
    seed.logLevel,
    overrides.maxParallelism ?? null,
    overrides.logLevel ?? null,
    seed.keyParallelism,
    overrides.keyParallelism !== undefined,
    overrides.keyParallelism ?? null,
  ]);
  // Work parked at the old per-key limit may have room under the new one. After the pool
  // row's update, which waited for every claim that read the old limit to commit.
  if (overrides.keyParallelism !== undefined) await run(db(), stmts.unparkAll, [pool]);
  // A changed limit concerns workers in every process (a raised one frees slots).
  if (overrides.maxParallelism !== undefined || overrides.logLevel !== undefined || overrides.keyParallelism !== undefined) {
    await run(db(), stmts.notify, [channel, pool]);
  }
  return toPoolConfig(rows[0]!);
}

/** The pool's stored config, or null if the pool was never used. */
export async function readPoolConfigOn(db: Queryable, stmts: Statements, pool: string): Promise<PoolConfig | null> {
  const { rows } = await run<PgPoolRow>(db, stmts.readPool, [pool]);
  return rows[0] ? toPoolConfig(rows[0]) : null;
}
