/** The overview: every pool with its counts, limits and oldest wait, the live chart, and the schedules. */
import { html } from "htm/preact";
import { api, type PoolSummary } from "./api.js";
import { LiveChart } from "./chart.js";
import { duration } from "./format.js";
import { href, usePoll } from "./hooks.js";
import { Schedules } from "./schedules.js";

/** A pool's limit as a cell: "10", or "paused (10)". */
export function limitText(p: PoolSummary): string {
  return p.pausedFrom !== null ? `paused (${p.pausedFrom})` : String(p.maxParallelism);
}

const COUNTS = ["pending", "retrying", "running", "success", "failed", "canceled"] as const;

/** The overview page. */
export function Overview() {
  const pools = usePoll(api.pools, []);
  const series = usePoll(() => api.series(), []);
  return html`
    <h1>Pools</h1>
    ${pools.error && html`<p class="error">${pools.error}</p>`}
    <${LiveChart} series=${series.data} />
    <table class="pools">
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
        ${(pools.data ?? []).map(
          (p) =>
            html`<tr data-pool=${p.name}>
              <td><a href=${href.pool(p.name)}>${p.name}</a></td>
              <td class=${p.pausedFrom !== null ? "paused" : ""}>${limitText(p)}</td>
              <td>${p.keyParallelism ?? "–"}</td>
              <td>${p.rateLimit ? `${p.rateLimit.limit} / ${duration(p.rateLimit.periodMs)}` : "–"}</td>
              ${COUNTS.map((c) => html`<td class="num" data-count=${c}>${p.counts[c]}</td>`)}
              <td>${p.oldestPendingAgeMs === null ? "–" : duration(p.oldestPendingAgeMs)}</td>
              <td class="num">${p.lastMinute.started}</td>
              <td class="num">${p.lastMinute.finished}</td>
              <td data-field="mean-wait">${p.lastMinute.meanWaitMs === null ? "–" : duration(p.lastMinute.meanWaitMs)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    ${pools.data?.length === 0 && html`<p>No pools in this store yet.</p>`}
    <${Schedules} />
  `;
}
