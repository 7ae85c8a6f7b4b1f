/** A work's own log level and trace context, when it has them. */
import { html } from "htm/preact";
import type { WorkDetail } from "../api.js";

/** The tracing section of work `w`; nothing when it has neither a log level nor a traceparent. */
export function TracingSection({ w }: { w: WorkDetail }) {
  if (w.logLevel === null && w.traceparent === null) return null;
  return html`<section>
    <h2>Tracing</h2>
    ${w.logLevel !== null && html`<p data-field="log-level">Log level: ${w.logLevel}</p>`}
    ${w.traceparent !== null && html`<p data-field="traceparent">traceparent: <code>${w.traceparent}</code></p>`}
  </section>`;
}
