/** One attempt's log lines (ctx.log), oldest first, each shown as text, with the count of earlier lines dropped. */
import { html } from "htm/preact";
import type { AttemptOutputRecord } from "../api.js";
import { when } from "../shared/format.js";

const LEVELS = new Set(["info", "warn", "error"]);

/** The log lines of attempt output `o`; nothing when it has none. */
export function AttemptLogs({ o }: { o: AttemptOutputRecord | undefined }) {
  if (!o || (o.logs.length === 0 && o.droppedLines === 0)) return null;
  return html`<details class="attempt-logs" open>
    <summary>Logs (${o.logs.length} ${o.logs.length === 1 ? "line" : "lines"})</summary>
    ${o.droppedLines > 0 && html`<p class="log-dropped">${`${o.droppedLines} earlier ${o.droppedLines === 1 ? "line" : "lines"} dropped`}</p>`}
    <ol class="log-lines">
      ${o.logs.map((l) => {
        const level = LEVELS.has(l.level) ? l.level : "info";
        return html`<li class=${`log ${level}`}>
          <span class="log-time">${when(l.at)}</span> <span class="log-level">${level}</span>
          <span class="log-message">${l.message}</span>
          ${l.fields !== undefined && html` <span class="log-fields">${JSON.stringify(l.fields)}</span>`}
          ${l.cut && html` <span class="log-cut">(cut)</span>`}
        </li>`;
      })}
    </ol>
  </details>`;
}
