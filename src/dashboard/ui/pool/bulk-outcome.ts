/**
 * What a bulk cancel or retry did, item by item: a summary line, then each id with its
 * outcome (retried work links to its new work; what was not done says why). Ids and
 * errors are shown as text.
 */
import { html } from "htm/preact";
import type { BulkAnswer } from "../api.js";
import { href } from "../shared/route.js";

/** The outcome of one bulk action: its verb ("Canceled", "Retried") and the server's answer. */
export interface BulkOutcomeData {
  verb: string;
  answer: BulkAnswer;
}

/** "Canceled 2 of 3; 1 not done". */
export function bulkSummary({ verb, answer }: BulkOutcomeData): string {
  const total = answer.done + answer.failed;
  return `${verb} ${answer.done} of ${total}` + (answer.failed ? `; ${answer.failed} not done` : "");
}

/** The summary and the per-item list. */
export function BulkOutcome({ outcome }: { outcome: BulkOutcomeData }) {
  return html`<div class="bulk-outcome" role="status" data-done=${outcome.answer.done} data-failed=${outcome.answer.failed}>
    <p class="notice">${bulkSummary(outcome)}</p>
    <ul class="bulk-results">
      ${outcome.answer.results.map(
        (r) =>
          html`<li data-id=${r.id} data-ok=${String(r.ok)} class=${r.ok ? "" : "error"}>
            <a class="mono" href=${href.work(r.id)}>${r.id}</a>
            ${
              r.ok
                ? r.newId
                  ? html` retried as <a class="mono new-id" href=${href.work(r.newId)}>${r.newId}</a>`
                  : html` ${outcome.verb.toLowerCase()}`
                : html` not done: <span class="bulk-error">${r.error}</span>`
            }
          </li>`,
      )}
    </ul>
  </div>`;
}
