/** The pool page's summary line: its limit (or paused), its counts by state and how long its oldest due work has waited. */
import { html } from "htm/preact";
import type { PoolSummary } from "../api.js";
import { durationOrDash, limitText } from "../shared/format.js";

/** The summary of `pool`. */
export function PoolSummaryLine({ pool }: { pool: PoolSummary }) {
  return html`<p class="summary">
    Limit <b data-limit>${limitText(pool)}</b> ·
    ${Object.entries(pool.counts).map(([k, v]) => html`<span class="count" data-count=${k}>${k} <b>${v}</b></span> `)} · oldest pending
    ${durationOrDash(pool.oldestPendingAgeMs)}
  </p>`;
}
