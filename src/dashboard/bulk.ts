/**
 * The bulk actions (cancel and retry of selected work). Their input is checked whole before
 * anything is done: a list that is not 1 to MAX_BULK work ids is a 400 naming the field,
 * and nothing changes. Well-formed ids are then acted on one by one, and the answer gives
 * each id's outcome: 200 when every one succeeded, 207 when some did not.
 */
import type { WorkpoolAdmin } from "../admin/types.js";
import { describeValue } from "../checks.js";
import { InvalidArgumentError, UnknownWorkError } from "../errors.js";
import { isWorkId } from "../ids.js";
import type { ApiAnswer } from "./answer.js";

/** Most ids of one bulk action. */
export const MAX_BULK = 500;

/** What a client is told of an item that failed in a way the handler did not expect (the server logs the error). */
const ITEM_INTERNAL_ERROR = "internal error (the server's log has the details)";

/** One id's outcome. */
export type BulkResult = { id: string; ok: true; newId?: string } | { id: string; ok: false; error: string };

/** The answer of a bulk action: each id's outcome, in the order given, and how many succeeded and failed. */
export interface BulkAnswer {
  results: BulkResult[];
  done: number;
  failed: number;
}

/** An item's outcome without its id; `error` says why it was not done. */
type ItemOutcome = { ok: true; newId?: string } | { ok: false; error: string };

/** The ids of a bulk action: an array of 1 to MAX_BULK work ids; else an error naming the field (`ids`, or `ids[3]`). */
export function checkBulkIds(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_BULK) {
    const got = Array.isArray(value) ? `${value.length} ids` : describeValue(value);
    throw new InvalidArgumentError("ids", `must be an array of 1 to ${MAX_BULK} work ids, got ${got}`);
  }
  value.forEach((id, i) => {
    if (!isWorkId(id)) {
      throw new InvalidArgumentError(`ids[${i}]`, `is not a work id (26 characters, as returned by enqueue), got ${describeValue(id)}`);
    }
  });
  return value as string[];
}

/**
 * Runs `act` on each id, one at a time (a bulk of 500 must not take 500 connections).
 * An error `act` did not turn into an outcome is logged once per request; its item says
 * only that it failed.
 */
async function eachId(
  ids: readonly string[],
  act: (id: string) => Promise<ItemOutcome>,
  logInternal: (e: unknown) => void,
): Promise<ApiAnswer> {
  const results: BulkResult[] = [];
  let firstInternal: { error: unknown } | null = null;
  for (const id of ids) {
    try {
      results.push({ id, ...(await act(id)) });
    } catch (e) {
      firstInternal ??= { error: e };
      results.push({ id, ok: false, error: ITEM_INTERNAL_ERROR });
    }
  }
  if (firstInternal) logInternal(firstInternal.error);
  const done = results.filter((r) => r.ok).length;
  const body: BulkAnswer = { results, done, failed: results.length - done };
  return { status: body.failed === 0 ? 200 : 207, body };
}

/** Cancels one work; when nothing was canceled, reads the work again to say why. */
async function cancelOne(admin: WorkpoolAdmin, id: string): Promise<ItemOutcome> {
  if (await admin.cancel(id)) return { ok: true };
  const work = await admin.get(id);
  if (work === null) return { ok: false, error: "no work with this id" };
  return { ok: false, error: work.state === "finished" ? `already finished (${work.resultKind ?? "finished"})` : "already being canceled" };
}

/** Retries one work as new work; the admin's refusal (unknown, or not failed or canceled) is the item's error. */
async function retryOne(admin: WorkpoolAdmin, id: string): Promise<ItemOutcome> {
  try {
    return { ok: true, newId: await admin.retry(id) };
  } catch (e) {
    if (e instanceof UnknownWorkError) return { ok: false, error: "no work with this id" };
    if (e instanceof InvalidArgumentError) return { ok: false, error: e.message.replace(/^workpool: id: /, "") };
    throw e;
  }
}

/** Cancels each of `ids` (already checked with checkBulkIds). */
export function bulkCancel(admin: WorkpoolAdmin, ids: readonly string[], logInternal: (e: unknown) => void): Promise<ApiAnswer> {
  return eachId(ids, (id) => cancelOne(admin, id), logInternal);
}

/** Retries each of `ids` (already checked with checkBulkIds); each success carries the new work's id. */
export function bulkRetry(admin: WorkpoolAdmin, ids: readonly string[], logInternal: (e: unknown) => void): Promise<ApiAnswer> {
  return eachId(ids, (id) => retryOne(admin, id), logInternal);
}
