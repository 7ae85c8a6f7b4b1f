/** The top of a work's page: where it is (overview / pool), its id, and one line of what it is. */
import { html } from "htm/preact";
import type { WorkDetail } from "../api.js";
import { href } from "../shared/route.js";

/** The heading of work `w`, whose state reads `state`. */
export function WorkHeading({ w, state }: { w: WorkDetail; state: string }) {
  return html`
    <p><a href=${href.overview()}>Pools</a> / <a href=${href.pool(w.pool)}>${w.pool}</a> /</p>
    <h1><span class="mono">${w.id}</span></h1>
    <p class="summary">
      <span class=${`state ${state}`} data-state=${state}>${state}</span> · ${w.kind} <b>${w.handler}</b>
      ${w.name !== null && html` · name <b class="work-name">${w.name}</b>`} · attempts ${w.attempts}
      ${w.key !== null && html` · key ${w.key}`} ${w.priority !== null && html` · priority ${w.priority}`}
    </p>
  `;
}
