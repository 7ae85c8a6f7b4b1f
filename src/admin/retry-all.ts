/**
 * admin.retryAll(): the bulk form of admin.retry(). It walks the pool's matching finished
 * work not yet retried in id order, a page at a time, and retries each page in one
 * transaction with the same write as retry() (the new work recorded as the old one's
 * retriedAs, only while unset). So a run stopped part way leaves whole pages retried and the
 * rest untouched, and a second run retries only the rest: no work is retried twice.
 */
import type { Clock } from "../clock.js";
import { checkOptionKeys, describeValue, optionKeys } from "../checks.js";
import type { RedriveOps, RedriveQuery } from "../driver/redrive-ops.js";
import { InvalidArgumentError } from "../errors.js";
import { newWorkId } from "../ids.js";
import { checkKey } from "../internal/enqueue-input.js";
import type { WorkId } from "../types.js";
import { INTERNAL_PREFIX } from "../workflow/internal-handlers.js";
import type { RetryAllFilter, RetryAllOptions, RetryAllPreview, RetryAllResult } from "./retry-all-types.js";
import { checkHandler, checkTime } from "./validate.js";

/** Work listed and retried per transaction. */
export const RETRY_ALL_PAGE = 500;

/** The states retryAll() takes: the finished work retry() takes. */
const RETRY_ALL_STATES: readonly RetryAllFilter["state"][] = ["failed", "canceled"];

const FILTER_KEYS = optionKeys<RetryAllFilter>()({ state: true, handler: true, key: true, finishedAfter: true, finishedBefore: true });
const OPTION_KEYS = optionKeys<RetryAllOptions>()({ dryRun: true });

/** retryAll()'s filter as a driver query: a known state, names as list() takes them, and a time range that can hold work. */
export function checkRetryAllFilter(filter: unknown): RedriveQuery {
  const f = checkOptionKeys("filter", filter, FILTER_KEYS, "admin.retryAll()") as Partial<Record<keyof RetryAllFilter, unknown>>;
  if (!RETRY_ALL_STATES.includes(f.state as RetryAllFilter["state"])) {
    throw new InvalidArgumentError(
      "state",
      `must be "failed" or "canceled" (finished work that retry() takes), got ${describeValue(f.state)}`,
    );
  }
  const from = f.finishedAfter === undefined ? null : checkTime("finishedAfter", f.finishedAfter);
  const before = f.finishedBefore === undefined ? null : checkTime("finishedBefore", f.finishedBefore);
  if (from !== null && before !== null && before <= from) {
    throw new InvalidArgumentError(
      "finishedBefore",
      `must be later than finishedAfter (${from}): no work finishes in that range, got ${before}`,
    );
  }
  return {
    kind: f.state as RetryAllFilter["state"],
    fnName: f.handler === undefined ? null : checkHandler(f.handler),
    key: f.key === undefined ? null : checkKey("key", f.key),
    finishedFrom: from,
    finishedBefore: before,
    // A workflow's steps are journaled once and never run again: their work is the run's to retry (restart), not this.
    notPrefix: INTERNAL_PREFIX,
  };
}

/** retryAll()'s options. */
export function checkRetryAllOptions(options: unknown): { dryRun: boolean } {
  if (options === undefined) return { dryRun: false };
  const o = checkOptionKeys("options", options, OPTION_KEYS, "admin.retryAll()") as { dryRun?: unknown };
  if (o.dryRun !== undefined && typeof o.dryRun !== "boolean") {
    throw new InvalidArgumentError("dryRun", `must be a boolean, got ${describeValue(o.dryRun)}`);
  }
  return { dryRun: o.dryRun === true };
}

/**
 * Retries (or, with `dryRun`, lists) `pool`'s work matching `query` that had finished when
 * the call began: the walk stops at the highest id that matched then, so work that a
 * worker fails while this runs (the new work among it) is left for another call.
 */
export async function retryAll(
  driver: RedriveOps,
  clock: Clock,
  pool: string,
  query: RedriveQuery,
  dryRun: boolean,
): Promise<RetryAllResult | RetryAllPreview> {
  const through = await driver.lastRedrivable(pool, query);
  const ids: WorkId[] = [];
  const retried: RetryAllResult["retried"] = [];
  let after: string | null = null;
  while (through !== null) {
    const page = await driver.listRedrivable(pool, query, after, through, RETRY_ALL_PAGE);
    if (!page.length) break;
    after = page[page.length - 1]!;
    if (dryRun) {
      for (const id of page) ids.push(id as WorkId);
    } else {
      const now = clock.now();
      const done = await driver.redrive(
        pool,
        page.map((id) => ({ id, newId: newWorkId(now) })),
        now,
      );
      for (const p of done) retried.push({ id: p.id as WorkId, newId: p.newId as WorkId });
    }
    if (page.length < RETRY_ALL_PAGE || after === through) break;
  }
  return dryRun ? { dryRun: true, count: ids.length, ids } : { dryRun: false, count: retried.length, retried };
}
