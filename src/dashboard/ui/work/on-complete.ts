/** A work's onComplete: its handler's state and error, and the result kinds it is skipped for. */
import { html } from "htm/preact";
import type { WorkDetail } from "../api.js";

/** The onComplete section of work `w`. */
export function OnCompleteSection({ w }: { w: WorkDetail }) {
  return html`<section>
    <h2>onComplete</h2>
    ${
      w.onComplete
        ? html`<p>${w.onComplete.handler}: <b>${w.onComplete.state}</b>, ${w.onComplete.failedAttempts} failed attempts</p>
            ${w.onComplete.error && html`<pre class="value error-text">${w.onComplete.error}</pre>`}`
        : html`<p>–</p>`
    }
    ${w.onCompleteExcludeKinds.length > 0 && html`<p data-field="exclude">Skipped for: ${w.onCompleteExcludeKinds.join(", ")}</p>`}
  </section>`;
}
