/** A work's kept attempts as bars on one time axis, from its enqueue to its last end. */
import { html } from "htm/preact";
import type { WorkDetail } from "../api.js";

/** One lane per attempt of work `w`, its bar colored by outcome. */
export function Timeline({ w }: { w: WorkDetail }) {
  const start = w.enqueuedAt;
  const end = Math.max(w.finishedAt ?? 0, ...w.attemptHistory.map((a) => a.endedAt), start + 1);
  const pct = (t: number): string => `${(((t - start) / (end - start)) * 100).toFixed(2)}%`;
  return html`<div class="timeline" aria-label="attempt timeline">
    ${w.attemptHistory.map((a) => {
      const from = a.startedAt ?? a.endedAt;
      return html`<div class="lane">
        <span class="lane-label">#${a.attempt}</span>
        <span class="lane-track"
          ><span class=${`bar ${a.outcome}`} style=${{ left: pct(from), width: `max(3px, calc(${pct(a.endedAt)} - ${pct(from)}))` }}></span
        ></span>
      </div>`;
    })}
  </div>`;
}
