/** Runs counted by state for each workflow; a click on a count filters the list to that workflow and state. */
import { html } from "htm/preact";
import type { WorkflowCounts } from "../api.js";

const STATES = ["running", "blocked", "success", "failed", "canceled"] as const;

/** One row per pool and workflow; `onPick(name, state)` ("" state: every state) applies the filter. */
export function WorkflowCountsTable({ counts, onPick }: { counts: WorkflowCounts[]; onPick: (name: string, state: string) => void }) {
  return html`<table class="workflow-counts">
    <thead>
      <tr>
        <th>Pool</th>
        <th>Workflow</th>
        ${STATES.map((s) => html`<th class="num">${s}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${counts.map(
        (c) =>
          html`<tr data-workflow=${c.name} data-pool=${c.pool}>
            <td>${c.pool}</td>
            <td><button class="link" onClick=${() => onPick(c.name, "")}>${c.name}</button></td>
            ${STATES.map(
              (s) =>
                html`<td class="num" data-count=${s}>
                  ${c[s] === 0 ? "0" : html`<button class=${`link state ${s}`} onClick=${() => onPick(c.name, s)}>${c[s]}</button>`}
                </td>`,
            )}
          </tr>`,
      )}
    </tbody>
  </table>`;
}
