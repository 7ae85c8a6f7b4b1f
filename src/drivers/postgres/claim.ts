/**
 * The two calls that move work in and out of `running` on a busy pool, each one call of
 * a function in the schema (see the migrations): claim(), and complete(), which writes a
 * batch of action results and claims the freed slots. Enforcing the pool's
 * maxParallelism happens in those functions, under the pool row's lock.
 */
import type { ClaimOptions, ClaimResult, CompleteResult, CompletionWrite } from "../../driver/driver.js";
import { run, type Queryable } from "./connection.js";
import { toClaimResult, type PgClaimRow } from "./rows.js";
import type { Statements } from "./statements.js";

/** The result a canceled attempt finishes with (a requested cancel wins over any outcome). */
const CANCELED_RESULT = JSON.stringify({ kind: "canceled" });

/** Claims due work of `pool` on `db` (the pool, or a client inside BEGIN). */
export async function claimOn(db: Queryable, stmts: Statements, pool: string, opts: ClaimOptions): Promise<ClaimResult> {
  const { rows } = await run<PgClaimRow>(db, stmts.claim, [pool, opts.workerId, opts.now, opts.leaseUntil, opts.limit]);
  const result = rows[0] ? toClaimResult(rows[0], pool, opts) : null;
  if (!result) throw new Error(`workpool: pool "${pool}" has no stored configuration (was the pool started?)`);
  return result;
}

/** A row of complete(): what was written, then the claim's columns (NULL without a claim). */
type PgCompleteRow = PgClaimRow & { stale: string[]; canceled: string[] };

/** Writes action results of `pool` and claims for the freed slots, on `db`, in one statement. */
export async function completeOn(
  db: Queryable,
  stmts: Statements,
  channel: string,
  pool: string,
  writes: readonly CompletionWrite[],
  now: number,
  claim: ClaimOptions | null,
): Promise<CompleteResult> {
  const { rows } = await run<PgCompleteRow>(db, stmts.complete, [
    pool,
    outcomesJson(writes),
    CANCELED_RESULT,
    now,
    channel,
    claim?.workerId ?? "",
    claim?.leaseUntil ?? 0,
    claim?.limit ?? 0,
  ]);
  const row = rows[0]!;
  return { stale: row.stale, canceled: row.canceled, claim: claim ? toClaimResult(row, pool, claim) : null };
}

/**
 * The outcomes as one JSON object keyed by id, which complete() reads by lookup:
 * `{"<id>":[attempt,"<status>",<result as a JSON string, or null>,<runAt or null>],...}`.
 * Written out directly rather than built as objects and stringified: it runs for every
 * batch of a busy pool. Statuses are fixed words and the numbers are integers; ids and
 * results are escaped as JSON strings.
 */
export function outcomesJson(writes: readonly CompletionWrite[]): string {
  let json = "{";
  for (let i = 0; i < writes.length; i++) {
    const w = writes[i]!;
    if (i > 0) json += ",";
    json += `${JSON.stringify(w.id)}:[${w.attempt},"${w.status}",${w.result === null ? "null" : JSON.stringify(w.result)},${w.runAt === null ? "null" : w.runAt}]`;
  }
  return json + "}";
}
