/** The overview's table of pools: limits, counts by state, the oldest wait and the last minute's activity. */
import { html } from "htm/preact";
import type { PoolSummary } from "../api.js";
import { duration, durationOrDash, limitText } from "../shared/format.js";
import { href } from "../shared/route.js";

const COUNTS = ["pending", "retrying", "running", "success", "failed", "canceled"] as const;

/** One row per pool, each linking to the pool's page. */
export function PoolsTable({ pools }: { pools: PoolSummary[] }) {
  return html`<table class="pools">
    <thead>
      <tr>
        <th>Pool</th>
        <th>Limit</th>
        <th>Key limit</th>
        <th>Rate limit</th>
        ${COUNTS.map((c) => html`<th class="num">${c}</th>`)}
        <th>Oldest pending</th>
        <th class="num">Started / min</th>
        <th class="num">Finished / min</th>
        <th>Mean wait</th>
      </tr>
    </thead>
    <tbody>
      ${pools.map(
        (p) =>
          html`<tr data-pool=${p.name}>
            <td><a href=${href.pool(p.name)}>${p.name}</a></td>
            <td class=${p.pausedFrom !== null ? "paused" : ""}>${limitText(p)}</td>
            <td>${p.keyParallelism ?? "–"}</td>
            <td>${p.rateLimit ? `${p.rateLimit.limit} / ${duration(p.rateLimit.periodMs)}` : "–"}</td>
            ${COUNTS.map((c) => html`<td class="num" data-count=${c}>${p.counts[c]}</td>`)}
            <td>${durationOrDash(p.oldestPendingAgeMs)}</td>
            <td class="num">${p.lastMinute.started}</td>
            <td class="num">${p.lastMinute.finished}</td>
            <td data-field="mean-wait">${durationOrDash(p.lastMinute.meanWaitMs)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}
