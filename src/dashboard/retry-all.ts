/**
 * The dashboard's "retry all matching" action (`POST api/action/retry-all`): admin.retryAll()
 * over the pool page's filter. The page asks with `dryRun` first, shows the count and asks
 * for a confirmation, then asks again without it. The body's keys are checked by the action
 * endpoint and its values by the admin API, before anything is written.
 */
import type { RetriedWork, RetryAllFilter } from "../admin/retry-all-types.js";
import type { WorkpoolAdmin } from "../admin/types.js";
import type { ApiAnswer } from "./answer.js";

/** Most pairs of old and new ids an answer carries; `count` says how many were retried. */
export const RETRY_ALL_SHOWN = 500;

/** The JSON body of the action: the pool, the filter, and whether only to count. */
export type RetryAllBody = { pool: string; dryRun?: boolean } & RetryAllFilter;

/** What the action answers: how many were (or, with dryRun, would be) retried, and the first pairs. */
export type RetryAllAnswer = { dryRun: true; count: number } | { dryRun: false; count: number; retried: RetriedWork[] };

/** Runs the action on a body whose keys are checked. */
export async function retryAllAction(admin: WorkpoolAdmin, body: Partial<Record<keyof RetryAllBody, unknown>>): Promise<ApiAnswer> {
  const { pool, dryRun, ...filter } = body;
  const options = dryRun === undefined ? {} : { dryRun: dryRun as boolean };
  const result = await admin.retryAll(pool as string, filter as RetryAllFilter, options);
  const answer: RetryAllAnswer = result.dryRun
    ? { dryRun: true, count: result.count }
    : { dryRun: false, count: result.count, retried: result.retried.slice(0, RETRY_ALL_SHOWN) };
  return { status: 200, body: answer };
}
