/**
 * The Workflows page: runs counted per workflow (a click filters), the blocked runs first
 * in a section of their own, the versions with unfinished runs that no live process
 * defines, then every run, newest first, with filters and keyset pages.
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { api } from "../api.js";
import { Pager, usePages } from "../pool/pager.js";
import { usePoll } from "../shared/hooks.js";
import { OrphanVersions } from "./orphan-versions.js";
import { NO_RUN_FILTER, RunFilters, runQuery, type RunFilter } from "./run-filters.js";
import { RunsTable } from "./runs-table.js";
import { WorkflowCountsTable } from "./workflow-counts.js";

/** How many blocked runs the section lists (the rest are a filter away). */
const BLOCKED_SHOWN = 20;

/** The blocked runs, when there are any. */
function BlockedRuns() {
  const blocked = usePoll(() => api.workflows({ state: "blocked", limit: String(BLOCKED_SHOWN) }), []);
  const items = blocked.data?.items ?? [];
  if (blocked.error) return html`<p class="error">${blocked.error}</p>`;
  if (items.length === 0) return null;
  return html`<section class="blocked-runs">
    <h2>Blocked runs</h2>
    <p>Their code no longer matches their journal: fix the code and restart them, or cancel them.</p>
    <${RunsTable} items=${items} label="blocked runs" />
    ${blocked.data?.cursor && html`<p>More than ${BLOCKED_SHOWN}: filter by state blocked to page through them.</p>`}
  </section>`;
}

/** The Workflows page. */
export function WorkflowsPage() {
  const [filter, setFilter] = useState<RunFilter>(NO_RUN_FILTER);
  const pages = usePages();
  const counts = usePoll(api.workflowCounts, []);
  const list = usePoll(() => api.workflows({ ...runQuery(filter), cursor: pages.cursor }), [filter, pages.cursor]);
  const apply = (next: RunFilter): void => {
    setFilter(next);
    pages.reset();
  };
  const items = list.data?.items ?? [];
  return html`
    <h1>Workflows</h1>
    ${counts.error && html`<p class="error">${counts.error}</p>`}
    <${WorkflowCountsTable}
      counts=${counts.data ?? []}
      onPick=${(name: string, state: string) => apply({ ...NO_RUN_FILTER, name, state })}
    />
    ${counts.data?.length === 0 && html`<p>No workflow runs in this store yet.</p>`}
    <${BlockedRuns} />
    <${OrphanVersions} onPick=${(name: string, version: string) => apply({ ...NO_RUN_FILTER, name, version, state: "unfinished" })} />
    <h2>Runs</h2>
    <${RunFilters} key=${JSON.stringify(filter)} value=${filter} onApply=${apply} />
    ${list.error && html`<p class="error">${list.error}</p>`}
    <${RunsTable} items=${items} label="runs" />
    ${list.data && items.length === 0 && html`<p>No run matches.</p>`}
    <${Pager} pages=${pages} next=${list.data?.cursor} />
  `;
}
