/** When a work was enqueued, due, started and finished, its timeout and its retry behaviour. */
import { html } from "htm/preact";
import type { WorkDetail } from "../api.js";
import { duration, when } from "../shared/format.js";

/** The times of work `w`, as a definition list. */
export function WorkTimes({ w }: { w: WorkDetail }) {
  return html`<dl class="times">
    <dt>Enqueued</dt>
    <dd>${when(w.enqueuedAt)}</dd>
    <dt>Run at</dt>
    <dd>${when(w.runAt)}</dd>
    <dt>Started</dt>
    <dd>${when(w.startedAt)}</dd>
    <dt>Finished</dt>
    <dd>${when(w.finishedAt)}</dd>
    <dt>Timeout</dt>
    <dd>${w.timeoutMs === null ? "–" : duration(w.timeoutMs)}</dd>
    <dt>Retry</dt>
    <dd>${w.retry ? `${w.retry.maxAttempts} attempts, backoff ${duration(w.retry.initialBackoffMs)} × ${w.retry.base}` : "none"}</dd>
  </dl>`;
}
