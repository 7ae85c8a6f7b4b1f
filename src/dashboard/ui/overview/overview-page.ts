/** The overview: every pool with its counts, limits and oldest wait, the live chart, and the schedules. */
import { html } from "htm/preact";
import { api } from "../api.js";
import { usePoll } from "../shared/hooks.js";
import { LiveChart } from "../shared/live-chart.js";
import { PoolsTable } from "./pools-table.js";
import { Schedules } from "./schedules-table.js";

/** The overview page. */
export function Overview() {
  const pools = usePoll(api.pools, []);
  const series = usePoll(() => api.series(), []);
  return html`
    <h1>Pools</h1>
    ${pools.error && html`<p class="error">${pools.error}</p>`}
    <${LiveChart} series=${series.data} />
    <${PoolsTable} pools=${pools.data ?? []} />
    ${pools.data?.length === 0 && html`<p>No pools in this store yet.</p>`}
    <${Schedules} />
  `;
}
