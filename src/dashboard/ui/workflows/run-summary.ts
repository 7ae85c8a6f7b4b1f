/** The top of a run's page: where it is, its id, state, workflow and version, its times, and why it failed or is blocked. */
import { html } from "htm/preact";
import type { WorkflowRunDetail } from "../api.js";
import { when } from "../shared/format.js";
import { href } from "../shared/route.js";
import { callText, runState } from "./run-format.js";

type Run = WorkflowRunDetail["run"];

/** A blocked run's mismatch: the entry, what the code called there and what the journal recorded. */
function Blocked({ b }: { b: NonNullable<Run["blocked"]> }) {
  return html`<div class="blocked-box" data-field="blocked">
    <p><b>Blocked at entry ${b.n}</b>: the code no longer matches the journal.</p>
    <dl class="times">
      <dt>Expected (code)</dt>
      <dd data-field="expected">${callText(b.expected)}</dd>
      <dt>Recorded (journal)</dt>
      <dd data-field="recorded">${callText(b.recorded)}</dd>
    </dl>
  </div>`;
}

/** The heading, summary line and times of run `r`. */
export function RunSummary({ r }: { r: Run }) {
  const state = runState(r);
  return html`
    <p>
      <a href=${href.workflows()}>Workflows</a> /
      ${r.parentId !== null && html`<a class="mono parent" href=${href.run(r.parentId)}>${r.parentId}</a> (entry ${r.parentStep ?? "?"}) /`}
    </p>
    <h1><span class="mono">${r.workflowId}</span></h1>
    <p class="summary">
      <span class=${`state ${state}`} data-state=${state}>${state}</span>${" · workflow "}<b class="run-name">${r.name}</b>
      ${r.version !== null && html`${" · version "}<b>${r.version}</b>`}${" · pool "}<a href=${href.pool(r.pool)}>${r.pool}</a>
      ${` · ${r.steps} entries (${r.journalBytes} bytes)`}
    </p>
    <dl class="times">
      <dt>Created</dt>
      <dd>${when(r.createdAt)}</dd>
      <dt>Updated</dt>
      <dd>${when(r.updatedAt)}</dd>
      <dt>Finished</dt>
      <dd>${when(r.finishedAt)}</dd>
      <dt>Deadline</dt>
      <dd>${when(r.deadline)}</dd>
      <dt>onComplete</dt>
      <dd data-field="on-complete">
        ${r.onComplete ? `${r.onComplete.handler}: ${r.onComplete.state}, ${r.onComplete.failedAttempts} failed attempts` : "–"}
      </dd>
    </dl>
    ${r.onComplete?.error && html`<pre class="value error-text">${r.onComplete.error}</pre>`}
    ${r.blocked && html`<${Blocked} b=${r.blocked} />`}
  `;
}
