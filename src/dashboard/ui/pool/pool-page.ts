/**
 * A pool's page: its summary and actions (pause/resume, limit, cancel all, purge finished),
 * the live chart, and its work list with filters, search, keyset pages, bulk cancel / retry
 * and retry of all the failed (or canceled) work the filter matches.
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { api, type Session } from "../api.js";
import { usePoll } from "../shared/hooks.js";
import { LiveChart } from "../shared/live-chart.js";
import { href } from "../shared/route.js";
import { BulkBar } from "./bulk-bar.js";
import { BulkOutcome } from "./bulk-outcome.js";
import { Pager, usePages } from "./pager.js";
import { PoolActions } from "./pool-actions.js";
import { PoolSummaryLine } from "./pool-summary.js";
import { RetryAllMatching } from "./retry-all-matching.js";
import { usePoolRunner } from "./runner.js";
import { useSelection } from "./selection.js";
import { EMPTY_FILTER, WorkFilters, type Filter } from "./work-filters.js";
import { WorkTable } from "./work-table.js";

/** The pool page. */
export function PoolPage({ name, session }: { name: string; session: Session }) {
  const [filter, setFilter] = useState<Filter>(EMPTY_FILTER);
  const pages = usePages();
  const selection = useSelection();
  const pools = usePoll(api.pools, []);
  const series = usePoll(() => api.series(name), [name]);
  const page = usePoll(() => api.list(name, { ...filter, cursor: pages.cursor }), [name, filter, pages.cursor]);
  const { notice, bulk, run, runBulk } = usePoolRunner(selection, () => {
    pools.reload();
    page.reload();
  });
  const pool = pools.data?.find((p) => p.name === name);
  const items = page.data?.items ?? [];
  const apply = (next: Filter): void => {
    setFilter(next);
    pages.reset();
    selection.clear();
  };

  return html`
    <p><a href=${href.overview()}>Pools</a> /</p>
    <h1>Pool <span class="mono">${name}</span></h1>
    ${pool && html`<${PoolSummaryLine} pool=${pool} />`}
    ${!session.readOnly && pool && html`<${PoolActions} name=${name} paused=${pool.pausedFrom !== null} run=${run} />`}
    ${notice && html`<p class="notice" role="status">${notice}</p>`} ${bulk && html`<${BulkOutcome} outcome=${bulk} />`}
    <${LiveChart} series=${series.data} />
    <${WorkFilters} onApply=${apply} />
    ${page.error && html`<p class="error">${page.error}</p>`}
    ${!session.readOnly && html`<${BulkBar} count=${selection.ids.size} runBulk=${runBulk} />`}
    ${!session.readOnly && html`<${RetryAllMatching} pool=${name} filter=${filter} run=${run} />`}
    <${WorkTable} items=${items} selection=${session.readOnly ? null : selection} />
    ${page.data && items.length === 0 && html`<p>No work matches.</p>`}
    <${Pager} pages=${pages} next=${page.data?.cursor} />
  `;
}
