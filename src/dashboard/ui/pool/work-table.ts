/** The pool's work list: one row per work, newest first, each linking to its page; with a selection, a checkbox each. */
import { html } from "htm/preact";
import type { WorkSummary } from "../api.js";
import { stateOf, when } from "../shared/format.js";
import { href } from "../shared/route.js";
import { allSelected, type Selection } from "./selection.js";

/** The checkbox that selects (or unselects) the whole page. */
function PageCheckbox({ items, selection }: { items: WorkSummary[]; selection: Selection }) {
  const ids = items.map((w) => w.id);
  return html`<th>
    <input type="checkbox" aria-label="select page" checked=${allSelected(selection, ids)} onChange=${() => selection.togglePage(ids)} />
  </th>`;
}

/** One work's row. */
function WorkRow({ w, selection }: { w: WorkSummary; selection: Selection | null }) {
  const state = stateOf(w);
  return html`<tr data-id=${w.id} data-state=${state}>
    ${
      selection &&
      html`<td>
        <input type="checkbox" aria-label=${`select ${w.id}`} checked=${selection.ids.has(w.id)} onChange=${() => selection.toggle(w.id)} />
      </td>`
    }
    <td class="mono"><a href=${href.work(w.id)}>${w.id}</a></td>
    <td>${w.handler}</td>
    <td>${w.name ?? ""}</td>
    <td class=${`state ${state}`}>${state}</td>
    <td class="num">${w.attempts}</td>
    <td>${w.key ?? ""}</td>
    <td>${when(w.enqueuedAt)}</td>
    <td>${when(w.startedAt)}</td>
    <td>${when(w.finishedAt)}</td>
  </tr>`;
}

/** The table of `items`; `selection` null (read-only) shows no checkboxes. */
export function WorkTable({ items, selection }: { items: WorkSummary[]; selection: Selection | null }) {
  return html`<table class="work">
    <thead>
      <tr>
        ${selection && html`<${PageCheckbox} items=${items} selection=${selection} />`}
        <th>Id</th>
        <th>Handler</th>
        <th>Name</th>
        <th>State</th>
        <th class="num">Attempts</th>
        <th>Key</th>
        <th>Enqueued</th>
        <th>Started</th>
        <th>Finished</th>
      </tr>
    </thead>
    <tbody>
      ${items.map((w) => html`<${WorkRow} key=${w.id} w=${w} selection=${selection} />`)}
    </tbody>
  </table>`;
}
