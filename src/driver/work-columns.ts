/**
 * A work row's columns, listed once: the columns an enqueue writes, in order (the field
 * each is written from, its SQL column, its PostgreSQL type and how its value is stored),
 * and the one builder of a new row. Both drivers generate their INSERT column lists and
 * parameter lists from WORK_COLUMNS; enqueue, cron ticks, the admin's retry and the
 * transaction executors make rows with newWork().
 */
import type { RetryBehavior } from "../types.js";
import type { NewWork, WorkFields } from "./work-rows.js";

/** A field of NewWork that is a column (onConflict only says how an insert resolves a unique key). */
export type WorkColumnField = Exclude<keyof NewWork, "onConflict">;

/** One insert column of the work table. */
export interface WorkColumn {
  /** The NewWork field it is written from. */
  readonly field: WorkColumnField;
  /** Its name in SQL. */
  readonly column: string;
  /** Its parameter type on PostgreSQL. */
  readonly pgType: "text" | "bigint" | "int";
  /** How its value is written: as the field holds it, or as JSON text. */
  readonly write: "value" | "json";
  /** Whether an enqueue with `onConflict: "replace"` writes it over the pending work's with the same unique key. */
  readonly replaced: boolean;
}

/** The columns an enqueue writes, in the order of every insert statement and of {@link newWorkValues}. */
export const WORK_COLUMNS = [
  { field: "id", column: "id", pgType: "text", write: "value", replaced: false },
  { field: "pool", column: "pool", pgType: "text", write: "value", replaced: false },
  { field: "kind", column: "kind", pgType: "text", write: "value", replaced: false },
  { field: "fnName", column: "fn_name", pgType: "text", write: "value", replaced: false },
  { field: "name", column: "name", pgType: "text", write: "value", replaced: false },
  { field: "args", column: "args", pgType: "text", write: "value", replaced: true },
  { field: "runAt", column: "run_at", pgType: "bigint", write: "value", replaced: true },
  { field: "enqueuedAt", column: "enqueued_at", pgType: "bigint", write: "value", replaced: false },
  { field: "retry", column: "retry", pgType: "text", write: "json", replaced: false },
  { field: "timeoutMs", column: "timeout_ms", pgType: "bigint", write: "value", replaced: false },
  { field: "onComplete", column: "on_complete", pgType: "text", write: "value", replaced: true },
  { field: "context", column: "context", pgType: "text", write: "value", replaced: true },
  { field: "priority", column: "priority", pgType: "int", write: "value", replaced: true },
  { field: "key", column: "key", pgType: "text", write: "value", replaced: true },
  { field: "meta", column: "meta", pgType: "text", write: "value", replaced: true },
  { field: "uniqueKey", column: "unique_key", pgType: "text", write: "value", replaced: false },
] as const satisfies readonly WorkColumn[];

/** Compiles only when T is never: every column field of NewWork has a column above. */
type Never<T extends never> = T;
type _EveryFieldHasAColumn = Never<Exclude<WorkColumnField, (typeof WORK_COLUMNS)[number]["field"]>>;

/**
 * The insert columns a stored row reads back (WorkFields): all but the unique key, which
 * the claim clears and no read returns.
 */
export const ROW_COLUMNS: readonly WorkColumn[] = WORK_COLUMNS.filter((c) => c.field !== "uniqueKey");

/** The columns a stored row (WorkRow) has beyond its insert columns: its state, as transitions write it. */
export const STATE_COLUMNS = [
  "state",
  "attempt",
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
] as const;

/** What a new row must be given; every other field has a default (none: null, priority 0, onConflict "keep"). */
export type NewWorkInput = Pick<NewWork, "id" | "pool" | "kind" | "fnName" | "args" | "runAt" | "enqueuedAt"> & Partial<NewWork>;

/**
 * A new row from its fields; `id` and `args`, when given, replace the fields' (the rows of
 * one enqueue call share all the others, so one set of fields makes every row, and each
 * row is one object). Every field is written out in one order, so every row has one shape.
 */
export function newWork(f: NewWorkInput, id: string = f.id, args: string = f.args): NewWork {
  return {
    id,
    pool: f.pool,
    kind: f.kind,
    fnName: f.fnName,
    name: f.name ?? null,
    args,
    runAt: f.runAt,
    enqueuedAt: f.enqueuedAt,
    retry: f.retry ?? null,
    timeoutMs: f.timeoutMs ?? null,
    onComplete: f.onComplete ?? null,
    context: f.context ?? null,
    priority: f.priority ?? 0,
    key: f.key ?? null,
    meta: f.meta ?? null,
    uniqueKey: f.uniqueKey ?? null,
    onConflict: f.onConflict ?? "keep",
  };
}

/**
 * The same work as `row` once more, as a new row `id` due at `now`: every field a stored
 * row keeps (ROW_COLUMNS) copied, but its identity and times; no unique key.
 */
export function newWorkLike(row: WorkFields, id: string, now: number): NewWork {
  const fields: Partial<Record<WorkColumnField, unknown>> = {};
  for (const c of ROW_COLUMNS) fields[c.field] = row[c.field as keyof WorkFields];
  return newWork({ ...(fields as WorkFields), id, runAt: now, enqueuedAt: now });
}

/** A value bound to an insert statement. */
export type WorkValue = string | number | null;

/** The last retry behaviour written: the rows of one batch share it, so its JSON is made once. */
let lastRetry: { value: RetryBehavior; text: string } | null = null;

function retryText(retry: RetryBehavior | null): string | null {
  if (retry === null) return null;
  if (lastRetry?.value !== retry) lastRetry = { value: retry, text: JSON.stringify(retry) };
  return lastRetry.text;
}

/**
 * A new row's values in WORK_COLUMNS order, each as its column is written. Written out
 * rather than looped over the list: it runs for every row enqueued, and the loop measured
 * ten times slower (test/unit/work-columns.test.ts checks that the order matches the list).
 */
export function newWorkValues(w: NewWork): WorkValue[] {
  return [
    w.id,
    w.pool,
    w.kind,
    w.fnName,
    w.name,
    w.args,
    w.runAt,
    w.enqueuedAt,
    retryText(w.retry),
    w.timeoutMs,
    w.onComplete,
    w.context,
    w.priority,
    w.key,
    w.meta,
    w.uniqueKey,
  ];
}

/**
 * Whether `a` and `b` agree on every column but id and args (the retry behaviour by
 * identity: the rows of one enqueue call share one object), so a batch of them can send
 * the other columns once. Written out for the speed of a batch of thousands
 * (test/unit/work-columns.test.ts checks that it compares every other column of the list).
 */
export function sharesColumns(a: NewWork, b: NewWork): boolean {
  return (
    a.pool === b.pool &&
    a.kind === b.kind &&
    a.fnName === b.fnName &&
    a.name === b.name &&
    a.runAt === b.runAt &&
    a.enqueuedAt === b.enqueuedAt &&
    a.retry === b.retry &&
    a.timeoutMs === b.timeoutMs &&
    a.onComplete === b.onComplete &&
    a.context === b.context &&
    a.priority === b.priority &&
    a.key === b.key &&
    a.meta === b.meta &&
    a.uniqueKey === b.uniqueKey
  );
}

const UNIQUE_KEY_AT = WORK_COLUMNS.findIndex((c) => c.field === "uniqueKey");

/** A new row's values in ROW_COLUMNS order: newWorkValues() without the unique key. */
export function rowValues(w: NewWork): WorkValue[] {
  const values = newWorkValues(w);
  values.splice(UNIQUE_KEY_AT, 1);
  return values;
}

/** The SQL column names of `columns`, comma-separated. */
export function columnList(columns: readonly WorkColumn[]): string {
  return columns.map((c) => c.column).join(", ");
}

/** The SET list of an upsert that replaces pending work's fields (`col = excluded.col` for each replaced column). */
export const REPLACED_SET = WORK_COLUMNS.filter((c) => c.replaced)
  .map((c) => `${c.column} = excluded.${c.column}`)
  .join(", ");
