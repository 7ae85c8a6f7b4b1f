/** A work's args, context and result (return value or error), each shown as text. */
import { html } from "htm/preact";
import type { WorkDetail } from "../api.js";
import { json } from "../shared/format.js";

/** The result: the return value, the error, "canceled", or "–" while unfinished. */
function Result({ w }: { w: WorkDetail }) {
  const r = w.result;
  if (!r) return html`<p>–</p>`;
  if (r.kind === "success") return html`<pre class="value">${json(r.returnValue)}</pre>`;
  if (r.kind === "failed") return html`<pre class="value error-text">${r.error}</pre>`;
  return html`<p>canceled</p>`;
}

/** Args and context side by side, then the result, of work `w`. */
export function WorkValues({ w }: { w: WorkDetail }) {
  return html`
    <div class="cols">
      <section>
        <h2>Args</h2>
        <pre class="value" data-field="args">${json(w.args)}</pre>
      </section>
      <section>
        <h2>Context</h2>
        <pre class="value" data-field="context">${json(w.context)}</pre>
      </section>
    </div>
    <section>
      <h2>Result</h2>
      <${Result} w=${w} />
    </section>
  `;
}
