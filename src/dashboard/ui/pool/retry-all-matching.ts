/**
 * "Retry all matching": retries every work of the pool that the applied filter lists as
 * failed (or canceled), not only the page shown. It counts first (a dry run), asks with the
 * count, then retries; the outcome line says how many were retried.
 */
import { html } from "htm/preact";
import { act, type RetryAllAnswer } from "../api.js";
import type { RunAction } from "./runner.js";
import type { Filter } from "./work-filters.js";

/** The states whose work retry-all takes. */
const RETRYABLE = ["failed", "canceled"];

/** The button, shown while the applied filter is failed or canceled work (search is not one of retry-all's filters). */
export function RetryAllMatching({ pool, filter, run }: { pool: string; filter: Filter; run: RunAction }) {
  if (!RETRYABLE.includes(filter.state) || filter.search !== "") return null;
  const body: Record<string, unknown> = { pool, state: filter.state };
  if (filter.handler !== "") body.handler = filter.handler;
  if (filter.key !== "") body.key = filter.key;
  const retryAll = async (): Promise<string> => {
    const preview = await act<RetryAllAnswer>("retry-all", { ...body, dryRun: true });
    if (preview.count === 0) return `Nothing to retry: no ${filter.state} work matching the filter that was not retried already.`;
    if (!confirm(`Retry all ${preview.count} ${filter.state} work matching the filter, each as new work?`)) return "Nothing retried.";
    const done = await act<RetryAllAnswer>("retry-all", body);
    return `Retried ${done.count} ${filter.state} work.`;
  };
  return html`<div class="retry-all">
    <button class="danger" onClick=${() => run("", retryAll)}>Retry all matching</button>
  </div>`;
}
