/**
 * A work's page: what it is and when it ran, its args, context, result and onComplete, its
 * trace context, its latest progress (a bar the page's refresh moves), and every kept attempt
 * with its error and log lines on a timeline; cancel and retry.
 * All user data is shown as text.
 */
import { html } from "htm/preact";
import { api, type Session } from "../api.js";
import { stateOf } from "../shared/format.js";
import { usePoll } from "../shared/hooks.js";
import { AttemptsSection } from "./attempts.js";
import { OnCompleteSection } from "./on-complete.js";
import { ProgressSection } from "./progress.js";
import { TracingSection } from "./tracing.js";
import { WorkActions } from "./work-actions.js";
import { WorkHeading } from "./work-heading.js";
import { WorkTimes } from "./work-times.js";
import { WorkValues } from "./work-values.js";

/** The work page. */
export function WorkPage({ id, session }: { id: string; session: Session }) {
  const work = usePoll(() => api.work(id), [id]);
  const w = work.data;
  if (work.error && !w) return html`<p class="error">${work.error}</p>`;
  if (!w) return html`<p>Loading…</p>`;
  const state = stateOf(w);
  return html`
    <${WorkHeading} w=${w} state=${state} />
    <${WorkActions} w=${w} state=${state} readOnly=${session.readOnly} reload=${work.reload} />
    <${WorkTimes} w=${w} />
    <${ProgressSection} w=${w} />
    <${WorkValues} w=${w} />
    <${OnCompleteSection} w=${w} />
    <${TracingSection} w=${w} />
    <${AttemptsSection} w=${w} />
  `;
}
