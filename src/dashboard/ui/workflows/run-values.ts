/** A run's args, context and outcome (its return value or its whole error), each shown as text. */
import { html } from "htm/preact";
import type { WorkflowRunDetail } from "../api.js";
import { json } from "../shared/format.js";

type Run = WorkflowRunDetail["run"];

/** The outcome: the return value, the error, "canceled", or "–" while it runs. */
function Outcome({ r }: { r: Run }) {
  if (r.state === "success") return html`<pre class="value" data-field="result">${json(r.result)}</pre>`;
  if (r.state === "failed") return html`<pre class="value error-text" data-field="error">${r.error ?? ""}</pre>`;
  if (r.state === "canceled") return html`<p>canceled</p>`;
  return html`<p>–</p>`;
}

/** Args and context side by side, then the outcome, of run `r`. */
export function RunValues({ r }: { r: Run }) {
  return html`
    <div class="cols">
      <section>
        <h2>Args</h2>
        <pre class="value" data-field="args">${json(r.args)}</pre>
      </section>
      <section>
        <h2>Context</h2>
        <pre class="value" data-field="context">${json(r.context)}</pre>
      </section>
    </div>
    <section>
      <h2>Result</h2>
      <${Outcome} r=${r} />
    </section>
  `;
}
