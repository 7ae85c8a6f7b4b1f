/**
 * A work's kept attempts: the timeline, then each attempt with its outcome, times, error
 * (name, message, stack) and log lines, all as text; a running attempt's lines too.
 */
import { html } from "htm/preact";
import type { AttemptOutputRecord, AttemptRecord, WorkDetail } from "../api.js";
import { duration, when } from "../shared/format.js";
import { AttemptLogs } from "./attempt-logs.js";
import { Timeline } from "./timeline.js";

/** When an attempt ran, as one line of text. */
function attemptTimes(a: AttemptRecord): string {
  const took = a.startedAt === null ? "" : ` · took ${duration(a.endedAt - a.startedAt)}`;
  return `· started ${when(a.startedAt)} · ended ${when(a.endedAt)}${took}`;
}

/** One ended attempt, with its log lines. */
function Attempt({ a, o }: { a: AttemptRecord; o: AttemptOutputRecord | undefined }) {
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
    <${AttemptLogs} o=${o} />
  </div>`;
}

/** An attempt with log lines but no record of its end: the running one (or one handed back unfinished). */
function Unended({ w, o }: { w: WorkDetail; o: AttemptOutputRecord }) {
  const running = w.state === "running" && o.attempt === w.attempts;
  return html`<div class="attempt" data-attempt=${o.attempt}>
    <p>
      <b>#${o.attempt}</b> ${running ? html`<span class="state running">running</span>` : html`<span>not ended</span>`}
      ${running ? ` · started ${when(w.startedAt)}` : ""}
    </p>
    <${AttemptLogs} o=${o} />
  </div>`;
}

/** The attempts section of work `w`. */
export function AttemptsSection({ w }: { w: WorkDetail }) {
  const outputs = new Map(w.attemptOutput.map((o) => [o.attempt, o]));
  const ended = new Set(w.attemptHistory.map((a) => a.attempt));
  const unended = w.attemptOutput.filter((o) => !ended.has(o.attempt) && (o.logs.length > 0 || o.droppedLines > 0));
  return html`<section>
    <h2>Attempts</h2>
    ${w.attemptHistory.length === 0 ? html`<p>None ended yet.</p>` : html`<${Timeline} w=${w} />`}
    ${w.attemptHistory.map((a) => html`<${Attempt} a=${a} o=${outputs.get(a.attempt)} />`)}
    ${unended.map((o) => html`<${Unended} w=${w} o=${o} />`)}
  </section>`;
}
