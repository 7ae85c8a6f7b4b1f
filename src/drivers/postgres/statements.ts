/**
 * Every SQL statement the PostgreSQL driver runs, built once per schema.
 *
 * - Each statement has a name derived from its text, so node-postgres prepares it once
 *   per connection (PostgreSQL parses and plans it once) and two stores with different
 *   schemas on one pg.Pool never collide.
 * - Lists travel as arrays: `= ANY($1::text[])` for ids, `unnest($1::text[], ...)` for
 *   rows, so a batch of any size is one statement and one round trip.
 * - Columns are listed explicitly (no `*`), so a prepared plan never changes shape.
 * - Statements that make work pending (insert, reschedule, release) send `pg_notify` in
 *   the same statement: the notification is delivered when, and only if, the
 *   transaction commits.
 */
import { createHash } from "node:crypto";
import { quoteIdent } from "./names.js";
import type { InsertForm } from "./rows.js";

/** A named SQL statement. */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

/** Columns of the work table, in the order rows.ts reads them. */
export const WORK_COLUMNS = [
  "id",
  "pool",
  "kind",
  "fn_name",
  "name",
  "args",
  "state",
  "run_at",
  "enqueued_at",
  "attempt",
  "retry",
  "timeout_ms",
  "on_complete",
  "context",
  "cancel_requested",
  "worker_id",
  "lease_until",
  "started_at",
  "result",
  "finished_at",
  "oc_state",
  "oc_attempts",
  "oc_run_at",
  "oc_error",
  "priority",
  "key",
  "meta",
] as const;

/** Enqueue: the insert forms and enqueue_claim(). */
function enqueueSql(s: string) {
  const work = `${s}.work`;
  const insertInto = `INSERT INTO ${work} (id, pool, kind, fn_name, name, args, state, run_at, enqueued_at, retry, timeout_ms, on_complete, context,
    priority, key, meta, unique_key)`;
  const oneRow = `$1::text, $2::text, $3::text, $4::text, $5::text, $6::text, 'pending', $7::bigint, $8::bigint, $9::text, $10::bigint, $11::text, $12::text,
    $13::int, $14::text, $15::text, $16::text`;
  const insertOne = `${insertInto} VALUES (${oneRow})`;
  const insertBatch = `${insertInto}
    SELECT t.id, t.pool, t.kind, t.fn_name, t.name, t.args, 'pending', t.run_at, t.enqueued_at, t.retry, t.timeout_ms, t.on_complete, t.context,
      t.priority, t.key, t.meta, t.unique_key
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::bigint[],
                $9::text[], $10::bigint[], $11::text[], $12::text[], $13::int[], $14::text[], $15::text[], $16::text[])
      AS t(id, pool, kind, fn_name, name, args, run_at, enqueued_at, retry, timeout_ms, on_complete, context, priority, key, meta, unique_key)`;
  // A batch whose rows differ only in id and args (every batch one enqueue call makes):
  // two arrays to send and unnest instead of sixteen; the other columns are scalars at
  // the same parameter positions as in the other forms.
  const sharedRow = `t.id, $2::text, $3::text, $4::text, $5::text, t.args, 'pending', $7::bigint, $8::bigint, $9::text, $10::bigint, $11::text, $12::text,
    $13::int, $14::text, $15::text, $16::text`;
  const sharedFrom = `unnest($1::text[], $6::text[]) AS t(id, args)`;
  const insertShared = `${insertInto} SELECT ${sharedRow} FROM ${sharedFrom}`;
  // The notifying forms. In the one-row and shared forms every row has pool $2: the
  // NOTIFY is a CTE the insert selects from (one row, evaluated once: a CTE calling a
  // volatile function is never inlined), so the statement answers like the quiet one,
  // with no rows. Run once per coalescing window among quiet inserts, a statement that
  // returned a row cost 3–5 times as much more than a quiet insert as this form does.
  const notifyPool = `WITH n AS (SELECT pg_notify($17::text, $2::text)) ${insertInto}`;
  const notifying = (insert: string) =>
    `WITH ins AS (${insert} RETURNING pool) SELECT pg_notify($17::text, p.pool) FROM (SELECT DISTINCT pool FROM ins) p`;
  // A row with a unique key: an upsert on the unique index of pending unique keys, so two
  // enqueues racing for one key make one work. The pending work that has the key is kept
  // (a write of nothing, so that RETURNING gives its id) or has its fields replaced (and is
  // unparked: its key may have changed); either way its id comes back. A conflicting row
  // that a claim is starting is waited for, and then no longer conflicts.
  const onUnique = `ON CONFLICT (pool, unique_key) WHERE state = 'pending' AND unique_key IS NOT NULL DO UPDATE SET`;
  const replaced = `args = excluded.args, run_at = excluded.run_at, priority = excluded.priority, key = excluded.key,
    on_complete = excluded.on_complete, context = excluded.context, meta = excluded.meta, parked = FALSE`;
  return {
    // Enqueue, by InsertForm (see rows.ts and insertStatements below): one row as plain
    // VALUES (it plans and runs faster than unnest), a batch as unnest. The notifying
    // forms wake every listener at commit; the quiet ones are for enqueues whose wake-up
    // the Notifier sends after them. $1..$16 the columns, $17 channel.
    insertOne: `${notifyPool} SELECT ${oneRow} FROM n`,
    insertOneQuiet: insertOne,
    insertShared: `${notifyPool} SELECT ${sharedRow} FROM n, ${sharedFrom}`,
    insertSharedQuiet: insertShared,
    insertRows: notifying(insertBatch),
    insertRowsQuiet: insertBatch,
    // One row with a unique key ($1..$16, $17 channel), notifying: a replaced runAt may be sooner.
    insertUniqueKeep: `${notifyPool} SELECT ${oneRow} FROM n ${onUnique} unique_key = excluded.unique_key RETURNING id`,
    insertUniqueReplace: `${notifyPool} SELECT ${oneRow} FROM n ${onUnique} ${replaced} RETURNING id`,

    // See enqueue_claim() in schema.sql. $1..$15 the columns (no unique key), $16 channel,
    // $17 worker, $18 now, $19 lease_until.
    enqueueClaim: `SELECT ${s}.enqueue_claim($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::bigint, $8::bigint,
      $9::text, $10::bigint, $11::text, $12::text, $13::int, $14::text, $15::text, $16::text, $17::text, $18::bigint, $19::bigint) AS claimed`,
  };
}

/** The pool's config, the claim and completion calls, heartbeats and the reads and locks of running work. */
function runningSql(s: string) {
  const work = `${s}.work`;
  const cols = WORK_COLUMNS.join(", ");
  return {
    // $1 pool, $2/$3/$6 seed, $4/$5 overrides (null: keep the stored value), $7 whether
    // to set key_parallelism to $8 (which may be null: no per-key limit). While the pool is
    // paused, a maxParallelism override sets the limit a resume restores.
    upsertPool: `INSERT INTO ${s}.pools AS p (name, max_parallelism, log_level, key_parallelism)
      VALUES ($1::text, coalesce($4::int, $2::int), coalesce($5::text, $3::text), CASE WHEN $7::boolean THEN $8::int ELSE $6::int END)
      ON CONFLICT (name) DO UPDATE SET
        max_parallelism = CASE WHEN p.paused_from IS NULL THEN coalesce($4::int, p.max_parallelism) ELSE p.max_parallelism END,
        paused_from = CASE WHEN p.paused_from IS NULL THEN NULL ELSE coalesce($4::int, p.paused_from) END,
        log_level = coalesce($5::text, p.log_level),
        key_parallelism = CASE WHEN $7::boolean THEN $8::int ELSE p.key_parallelism END
      RETURNING max_parallelism, log_level, key_parallelism`,
    readPool: `SELECT max_parallelism, log_level, key_parallelism FROM ${s}.pools WHERE name = $1::text`,
    // After the per-key limit changed: work parked at the old limit goes back to the claim.
    unparkAll: `UPDATE ${work} SET parked = FALSE WHERE pool = $1::text AND state = 'pending' AND parked`,
    notify: `SELECT pg_notify($1::text, $2::text)`,

    // See claim() in schema.sql: lock, count, claim, in one round trip. $1 pool, $2 worker,
    // $3 now, $4 lease_until, $5 limit, $6/$7/$8 the key to take due rows after first
    // (priority, run_at, id; NULL: from the head).
    claim: `SELECT * FROM ${s}.claim($1::text, $2::text, $3::bigint, $4::bigint, $5::int, $6::int, $7::bigint, $8::text)`,
    // See complete() in schema.sql: a batch of action results plus the claim of the freed
    // slots, in one round trip. $1 pool, $2 outcomes by id, $3 the canceled result, $4 now,
    // $5 channel, $6 worker, $7 lease_until, $8 claim limit (0: no claim), $9/$10/$11 the
    // claim's key (as claim's $6/$7/$8).
    complete: `SELECT * FROM ${s}.complete($1::text, $2::jsonb, $3::text, $4::bigint, $5::text, $6::text, $7::bigint, $8::int,
      $9::int, $10::bigint, $11::text)`,

    // Renews leases still held by this worker on this attempt. Rows locked by another
    // transaction (this worker's own mutation, a commit of results) are skipped rather
    // than waited for; they are reported as held, not lost. $1 pool, $2 ids, $3 attempts,
    // $4 worker, $5 lease_until.
    heartbeat: `WITH refs AS (
      SELECT r.id, r.attempt FROM unnest($2::text[], $3::int[]) AS r(id, attempt)
    ), mine AS (
      SELECT w.id, w.cancel_requested FROM ${work} w JOIN refs r ON r.id = w.id AND r.attempt = w.attempt
      WHERE w.pool = $1::text AND w.state = 'running' AND w.worker_id = $4::text
    ), renewed AS (
      UPDATE ${work} w SET lease_until = $5::bigint
      FROM refs r
      WHERE w.id = r.id AND w.attempt = r.attempt AND w.state = 'running' AND w.worker_id = $4::text
        AND w.id IN (SELECT id FROM ${work} WHERE id IN (SELECT id FROM mine) FOR UPDATE SKIP LOCKED)
      RETURNING w.id
    )
    SELECT m.id, m.cancel_requested FROM mine m`,

    readWork: `SELECT ${cols} FROM ${work} WHERE pool = $1::text AND id = ANY($2::text[])`,
    // Locks in id order, so transactions locking overlapping sets cannot deadlock.
    lockWork: `SELECT ${cols} FROM ${work} WHERE pool = $1::text AND id = ANY($2::text[]) ORDER BY id FOR UPDATE`,
    // Maintenance never waits: a row locked by someone else is being written right now.
    lockExpired: `SELECT ${cols} FROM ${work}
      WHERE pool = $1::text AND state = 'running' AND lease_until < $2::bigint
      ORDER BY lease_until LIMIT $3::int FOR UPDATE SKIP LOCKED`,
    lockOnCompleteDue: `SELECT ${cols} FROM ${work}
      WHERE pool = $1::text AND oc_state = 'pending' AND oc_run_at <= $2::bigint
      ORDER BY oc_run_at LIMIT $3::int FOR UPDATE SKIP LOCKED`,

    // $4 handler (NULL: any), $5 pending work only, $6 key (NULL: any).
    listCancelable: `SELECT id FROM (
        (SELECT id, 0 AS k FROM ${work}
         WHERE pool = $1::text AND state = 'pending' AND enqueued_at < $2::bigint AND ($4::text IS NULL OR fn_name = $4::text)
           AND ($6::text IS NULL OR key = $6::text)
         ORDER BY id LIMIT $3::int)
        UNION ALL
        (SELECT id, 1 AS k FROM ${work}
         WHERE pool = $1::text AND state = 'running' AND NOT cancel_requested AND enqueued_at < $2::bigint
           AND ($4::text IS NULL OR fn_name = $4::text) AND ($6::text IS NULL OR key = $6::text) AND NOT $5::boolean
         ORDER BY id LIMIT $3::int)
      ) c ORDER BY k, id LIMIT $3::int`,
  };
}

/** Writes of transitions made step by step, report counters, leadership and retention. */
function writeSql(s: string) {
  const work = `${s}.work`;
  return {
    // $5 / $3: each row's attempt-log record (JSON text, NULL for none), appended by attempt_log_append().
    finish: `UPDATE ${work} w
      SET state = 'finished', result = u.result, finished_at = u.finished_at, oc_state = u.oc_state,
          oc_run_at = CASE WHEN u.oc_state = 'pending' THEN u.finished_at ELSE NULL END,
          worker_id = NULL, lease_until = NULL, attempt_log = ${s}.attempt_log_append(w.attempt_log, u.entry::jsonb)
      FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[]) AS u(id, result, finished_at, oc_state, entry)
      WHERE w.id = u.id`,
    reschedule: `WITH upd AS (
      UPDATE ${work} w SET state = 'pending', run_at = u.run_at, worker_id = NULL, lease_until = NULL,
        attempt_log = ${s}.attempt_log_append(w.attempt_log, u.entry::jsonb)
      FROM unnest($1::text[], $2::bigint[], $3::text[]) AS u(id, run_at, entry)
      WHERE w.id = u.id
      RETURNING w.pool)
    SELECT pg_notify($4::text, p.pool) FROM (SELECT DISTINCT pool FROM upd) p`,
    release: `WITH upd AS (
      UPDATE ${work} w SET state = 'pending', attempt = w.attempt - 1, run_at = $3::bigint, worker_id = NULL, lease_until = NULL
      FROM unnest($1::text[], $2::int[]) AS u(id, attempt)
      WHERE w.id = u.id AND w.attempt = u.attempt AND w.state = 'running'
      RETURNING w.pool)
    SELECT pg_notify($4::text, p.pool) FROM (SELECT DISTINCT pool FROM upd) p`,
    requestCancel: `UPDATE ${work} SET cancel_requested = TRUE WHERE id = ANY($1::text[])`,
    updateOnComplete: `UPDATE ${work} w
      SET oc_state = u.oc_state, oc_attempts = u.oc_attempts, oc_run_at = u.oc_run_at, oc_error = u.oc_error
      FROM unnest($1::text[], $2::text[], $3::int[], $4::bigint[], $5::text[]) AS u(id, oc_state, oc_attempts, oc_run_at, oc_error)
      WHERE w.id = u.id`,

    // The shard is picked by connection (stats_shard(), inlined by the planner): concurrent
    // transactions use different rows.
    addStats: `INSERT INTO ${s}.stats AS t (pool, shard, completed, succeeded, failed, retries, canceled)
      VALUES ($1::text, ${s}.stats_shard(), $2::bigint, $3::bigint, $4::bigint, $5::bigint, $6::bigint)
      ON CONFLICT (pool, shard) DO UPDATE SET
        completed = t.completed + excluded.completed, succeeded = t.succeeded + excluded.succeeded,
        failed = t.failed + excluded.failed, retries = t.retries + excluded.retries, canceled = t.canceled + excluded.canceled`,
    readStats: `SELECT coalesce(sum(completed), 0)::bigint AS completed, coalesce(sum(succeeded), 0)::bigint AS succeeded,
        coalesce(sum(failed), 0)::bigint AS failed, coalesce(sum(retries), 0)::bigint AS retries,
        coalesce(sum(canceled), 0)::bigint AS canceled
      FROM ${s}.stats WHERE pool = $1::text`,

    acquireLeader: `INSERT INTO ${s}.leaders AS l (pool, worker_id, expires_at) VALUES ($1::text, $2::text, $3::bigint)
      ON CONFLICT (pool) DO UPDATE SET worker_id = excluded.worker_id, expires_at = excluded.expires_at
      WHERE l.worker_id = excluded.worker_id OR l.expires_at < $4::bigint
      RETURNING worker_id`,
    releaseLeader: `DELETE FROM ${s}.leaders WHERE pool = $1::text AND worker_id = $2::text`,

    deleteFinishedBefore: `DELETE FROM ${work} WHERE id IN (
      SELECT id FROM ${work}
      WHERE pool = $1::text AND state = 'finished' AND finished_at < $2::bigint AND oc_state <> 'pending'
      ORDER BY finished_at LIMIT $3::int FOR UPDATE SKIP LOCKED)`,
    deleteFinishedIds: `DELETE FROM ${work}
      WHERE pool = $1::text AND id = ANY($2::text[]) AND state = 'finished' AND oc_state <> 'pending'
      RETURNING id`,
    counts: `SELECT count(*) FILTER (WHERE state = 'pending')::int AS pending,
        count(*) FILTER (WHERE state = 'pending' AND run_at <= $2::bigint)::int AS due,
        count(*) FILTER (WHERE state = 'running')::int AS running
      FROM ${work} WHERE pool = $1::text AND state IN ('pending', 'running')`,
  };
}

function sql(schema: string) {
  const s = quoteIdent(schema);
  return { ...enqueueSql(s), ...runningSql(s), ...writeSql(s) };
}

/** The statements of one schema, by name. */
export type Statements = { readonly [K in keyof ReturnType<typeof sql>]: Statement };

/** The notifying and quiet insert statements for a batch of the given form. */
export function insertStatements(stmts: Statements, form: InsertForm): { notifying: Statement; quiet: Statement } {
  switch (form) {
    case "one":
      return { notifying: stmts.insertOne, quiet: stmts.insertOneQuiet };
    case "shared":
      return { notifying: stmts.insertShared, quiet: stmts.insertSharedQuiet };
    case "rows":
      return { notifying: stmts.insertRows, quiet: stmts.insertRowsQuiet };
  }
}

const cache = new Map<string, Statements>();

/** Statements for `schema`, built once per process. */
export function statementsFor(schema: string): Statements {
  let stmts = cache.get(schema);
  if (!stmts) {
    const texts = sql(schema);
    const built: Record<string, Statement> = {};
    for (const [key, text] of Object.entries(texts)) {
      built[key] = { name: `workpool_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`, text };
    }
    stmts = built as Statements;
    cache.set(schema, stmts);
  }
  return stmts;
}
