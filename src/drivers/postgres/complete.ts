/**
 * complete(): a batch of action results written, and the slots they free claimed, in one
 * call of the schema's complete() function (one round trip, one commit). The outcome of
 * each attempt is decided by the core; the function fences each write by attempt and lets
 * a requested cancel win.
 */
import type { ClaimOptions, CompleteResult, CompletionWrite } from "../../driver/driver.js";
import { FROM_HEAD, type ClaimKeys } from "./claim.js";
import { run, type Queryable } from "./connection.js";
import { toClaimResult, type PgClaimRow } from "./rows.js";
import { SendTime } from "./send-time.js";
import { statementsOf } from "./statements.js";

/**
 * See complete() in schema.sql: a batch of action results plus the claim of the freed
 * slots, in one round trip. $1 pool, $2 outcomes by id, $3 the canceled result, $4 now,
 * $5 channel, $6 worker, $7 lease_until, $8 claim limit (0: no claim), $9/$10/$11 the
 * claim's key (as claim's $6/$7/$8).
 */
const completeSql = (s: string) => ({
  complete: `SELECT * FROM ${s}.complete($1::text, $2::jsonb, $3::text, $4::bigint, $5::text, $6::text, $7::bigint, $8::int,
    $9::int, $10::bigint, $11::text)`,
});

/** The result a canceled attempt finishes with (a requested cancel wins over any outcome). */
const CANCELED_RESULT = JSON.stringify({ kind: "canceled" });

/** A row of complete(): what was written, then the claim's columns (NULL without a claim). */
type PgCompleteRow = PgClaimRow & { stale: string[]; canceled: string[] };

/** Writes action results of `pool` in `schema` and claims for the freed slots, on `db`, in one statement. */
export async function completeOn(
  db: Queryable,
  schema: string,
  keys: ClaimKeys,
  channel: string,
  pool: string,
  writes: readonly CompletionWrite[],
  now: number,
  claim: ClaimOptions | null,
): Promise<CompleteResult> {
  const [afterPriority, afterRunAt, afterId] = claim ? keys.next(pool, claim.clock()) : FROM_HEAD;
  // One time for the writes and the claim in the function: with a claim, the time it is sent.
  const time = claim ? new SendTime(claim) : null;
  const { rows } = await run<PgCompleteRow>(db, statementsOf(schema, completeSql).complete, [
    pool,
    outcomesJson(writes),
    CANCELED_RESULT,
    time?.now ?? now,
    channel,
    claim?.workerId ?? "",
    time?.leaseUntil ?? 0,
    claim?.limit ?? 0,
    afterPriority,
    afterRunAt,
    afterId,
  ]);
  const row = rows[0]!;
  const at = time?.read();
  const claimed = at ? toClaimResult(row, pool, at) : null;
  if (at && claimed) keys.record(pool, claimed.claimed, at.now);
  return { stale: row.stale, canceled: row.canceled, claim: claimed };
}

/**
 * The outcomes as one JSON object keyed by id, which complete() reads by lookup:
 * `{"<id>":[attempt,"<status>",<result as a JSON string, or null>,<runAt or null>(,<attempt entry>)],...}`,
 * the attempt entry (a JSON object, already JSON text) only for an attempt that threw.
 * Written out directly rather than built as objects and stringified: it runs for every
 * batch of a busy pool. Statuses are fixed words and the numbers are integers; ids and
 * results are escaped as JSON strings.
 */
export function outcomesJson(writes: readonly CompletionWrite[]): string {
  let json = "{";
  for (let i = 0; i < writes.length; i++) {
    const w = writes[i]!;
    if (i > 0) json += ",";
    json += `${JSON.stringify(w.id)}:[${w.attempt},"${w.status}",${w.result === null ? "null" : JSON.stringify(w.result)},${w.runAt === null ? "null" : w.runAt}`;
    json += w.attemptEntry ? `,${w.attemptEntry}]` : "]";
  }
  return json + "}";
}
