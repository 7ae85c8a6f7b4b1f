/**
 * Row helpers both drivers share: a new row's values in the insert statements' column
 * order, and the order in which a claim takes rows.
 */
import type { NewWork, WorkRow } from "./driver.js";

/** A new row's values in the insert statements' column order (16 columns); `retry` is its retry behaviour as JSON text. */
export function newWorkValues(w: NewWork, retry: string | null): (string | number | null)[] {
  return [
    w.id,
    w.pool,
    w.kind,
    w.fnName,
    w.name,
    w.args,
    w.runAt,
    w.enqueuedAt,
    retry,
    w.timeoutMs,
    w.onComplete,
    w.context,
    w.priority,
    w.key,
    w.meta,
    w.uniqueKey,
  ];
}

/** The claim's order: lowest priority first, then earliest run_at, then id. */
export function byClaimOrder(a: WorkRow, b: WorkRow): number {
  return a.priority - b.priority || a.runAt - b.runAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
