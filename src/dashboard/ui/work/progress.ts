/** The progress a work's latest attempt reported: a bar for a number, the JSON as text for an object. */
import { html } from "htm/preact";
import type { WorkDetail } from "../api.js";
import { json } from "../shared/format.js";

/** The progress section of work `w`; nothing when its latest attempt reported none. The page's refresh moves the bar. */
export function ProgressSection({ w }: { w: WorkDetail }) {
  const p = w.progress;
  if (p === null) return null;
  if (typeof p !== "number") {
    return html`<section>
      <h2>Progress</h2>
      <pre class="value" data-field="progress">${json(p)}</pre>
    </section>`;
  }
  // Checked when reported; clamped again, as the page trusts nothing it reads.
  const pct = Math.min(100, Math.max(0, p));
  return html`<section>
    <h2>Progress</h2>
    <p class="progress">
      <progress max="100" value=${pct} data-progress=${pct} aria-label="progress"></progress>
      <span>${`${pct}%`}</span>
    </p>
  </section>`;
}
