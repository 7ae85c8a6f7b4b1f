/**
 * A run's journal as a timeline: each entry's number, kind, name, state, times (with a bar
 * on the run's time axis), outcome or error, and a link to its work (its attempts and
 * aborts) or its child run. Long journals are read a page at a time.
 */
import { html } from "htm/preact";
import type { WorkflowRunDetail, WorkflowStepDetail } from "../api.js";
import { duration, when } from "../shared/format.js";
import { href } from "../shared/route.js";
import { shortJson } from "./run-format.js";

/** Entries the server reads per page (the admin API's default). */
const STEPS_PAGE = 500;

/** Where an entry leads: its child run, or the work that ran it. */
function StepLink({ s }: { s: WorkflowStepDetail }) {
  if (s.childId !== undefined) return html`<a class="mono child-link" href=${href.run(s.childId)}>run ${s.childId}</a>`;
  if (s.workId !== undefined) return html`<a class="mono work-link" href=${href.work(s.workId)}>work</a>`;
  return "";
}

/** An entry's outcome: its error, else its result, as one line of text. */
function StepOutcome({ s }: { s: WorkflowStepDetail }) {
  if (s.error !== undefined) return html`<span class="error-text step-error">${s.error}</span>`;
  return html`<code class="step-result">${shortJson(s.result)}</code>`;
}

/** The journal page in `detail`, on the run's time axis; `from` is its first entry, `goTo(n)` reads from entry n. */
export function StepTimeline({ detail, from, goTo }: { detail: WorkflowRunDetail; from: number; goTo: (n: number) => void }) {
  const { run, steps } = detail;
  const start = run.createdAt;
  const end = Math.max(run.finishedAt ?? run.updatedAt, ...steps.map((s) => s.finishedAt ?? s.startedAt), start + 1);
  const pct = (t: number): string => `${(((t - start) / (end - start)) * 100).toFixed(2)}%`;
  return html`<section>
    <h2>Journal</h2>
    ${steps.length === 0 && html`<p>${from === 0 ? "No entries yet." : "No entries from here."}</p>`}
    ${
      steps.length > 0 &&
      html`<table class="steps">
        <thead>
          <tr>
            <th class="num">#</th>
            <th>Kind</th>
            <th>Name</th>
            <th>State</th>
            <th>Started</th>
            <th>Took</th>
            <th class="bar-cell">Timeline</th>
            <th>Result / error</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          ${steps.map(
            (s) =>
              html`<tr data-step=${s.n} data-state=${s.state}>
                <td class="num">${s.n}</td>
                <td>${s.kind}</td>
                <td class="step-name">${s.name}</td>
                <td class=${`state ${s.state}`}>${s.state}</td>
                <td>${when(s.startedAt)}</td>
                <td>${s.finishedAt === null ? "–" : duration(s.finishedAt - s.startedAt)}</td>
                <td class="bar-cell">
                  <span class="lane-track"
                    ><span
                      class=${`bar ${s.state}`}
                      style=${{ left: pct(s.startedAt), width: `max(3px, calc(${pct(s.finishedAt ?? end)} - ${pct(s.startedAt)}))` }}
                    ></span
                  ></span>
                </td>
                <td class="step-outcome"><${StepOutcome} s=${s} /></td>
                <td><${StepLink} s=${s} /></td>
              </tr>`,
          )}
        </tbody>
      </table>`
    }
    ${
      (from > 0 || detail.nextStep !== null) &&
      html`<div class="pager">
        <button disabled=${from === 0} onClick=${() => goTo(Math.max(0, from - STEPS_PAGE))}>Earlier entries</button>
        <button disabled=${detail.nextStep === null} onClick=${() => detail.nextStep !== null && goTo(detail.nextStep)}>
          Later entries
        </button>
      </div>`
    }
  </section>`;
}
