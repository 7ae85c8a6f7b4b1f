/** A work's kept attempts: the timeline, then each attempt with its outcome, times and error (name, message, stack) as text. */
import { html } from "htm/preact";
import type { AttemptRecord, WorkDetail } from "../api.js";
import { duration, when } from "../shared/format.js";
import { Timeline } from "./timeline.js";

/** When an attempt ran, as one line of text. */
function attemptTimes(a: AttemptRecord): string {
  const took = a.startedAt === null ? "" : ` · took ${duration(a.endedAt - a.startedAt)}`;
  return `· started ${when(a.startedAt)} · ended ${when(a.endedAt)}${took}`;
}

/** One attempt. */
function Attempt({ a }: { a: AttemptRecord }) {
  return html`<div class="attempt" data-attempt=${a.attempt}>
    <p>
      <b>#${a.attempt}</b> <span class=${`state ${a.outcome}`}>${a.outcome}</span>
      ${attemptTimes(a)}
    </p>
    ${
      a.error &&
      html`<p class="error-text"><b>${a.error.name ?? "Error"}</b>: <span class="error-message">${a.error.message}</span></p>
        ${
          a.error.stack &&
          html`<details>
            <summary>Stack</summary>
            <pre class="value">${a.error.stack}</pre>
          </details>`
        }`
    }
  </div>`;
}

/** The attempts section of work `w`. */
export function AttemptsSection({ w }: { w: WorkDetail }) {
  return html`<section>
    <h2>Attempts</h2>
    ${w.attemptHistory.length === 0 ? html`<p>None ended yet.</p>` : html`<${Timeline} w=${w} />`}
    ${w.attemptHistory.map((a) => html`<${Attempt} a=${a} />`)}
  </section>`;
}
