/** A table of workflow runs, one row per run linking to its page; a failed run's error and a blocked run's mismatch as text. */
import { html } from "htm/preact";
import type { WorkflowSummary } from "../api.js";
import { when } from "../shared/format.js";
import { href } from "../shared/route.js";
import { blockedText, runState } from "./run-format.js";

/** One run's row. */
function RunRow({ r }: { r: WorkflowSummary }) {
  const state = runState(r);
  return html`<tr data-run=${r.workflowId} data-state=${state}>
    <td class="mono"><a href=${href.run(r.workflowId)}>${r.workflowId}</a></td>
    <td>${r.name}</td>
    <td>${r.version ?? ""}</td>
    <td class=${`state ${state}`}>${state}</td>
    <td class="num">${r.steps}</td>
    <td>${when(r.createdAt)}</td>
    <td>${when(r.finishedAt)}</td>
    <td class="run-note">${r.blocked ? blockedText(r.blocked) : (r.error ?? "")}</td>
  </tr>`;
}

/** The runs of `items`, newest first as listed. */
export function RunsTable({ items, label }: { items: WorkflowSummary[]; label: string }) {
  return html`<table class="runs" aria-label=${label}>
    <thead>
      <tr>
        <th>Run</th>
        <th>Workflow</th>
        <th>Version</th>
        <th>State</th>
        <th class="num">Steps</th>
        <th>Created</th>
        <th>Finished</th>
        <th>Error / mismatch</th>
      </tr>
    </thead>
    <tbody>
      ${items.map((r) => html`<${RunRow} key=${r.workflowId} r=${r} />`)}
    </tbody>
  </table>`;
}
