/**
 * A workflow run's page: its summary (state, version, times, error, blocked mismatch), its
 * args, context and result, the journal as a timeline, what it waits on, its events, its
 * child runs as a tree, a form that sends it an event, and its actions (cancel, restart,
 * fork, skip). All user data is shown as text.
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { api, type Session } from "../api.js";
import { usePoll } from "../shared/hooks.js";
import { ChildList } from "./child-tree.js";
import { RunActions } from "./run-actions.js";
import { RunSummary } from "./run-summary.js";
import { RunValues } from "./run-values.js";
import { EventsTable, PendingWaits } from "./run-waits.js";
import { SendEventForm } from "./send-event-form.js";
import { StepTimeline } from "./step-timeline.js";

/** The run page. */
export function RunPage({ id, session }: { id: string; session: Session }) {
  const [from, setFrom] = useState(0);
  const detail = usePoll(() => api.workflowRun(id, from), [id, from]);
  const d = detail.data;
  if (detail.error && !d) return html`<p class="error">${detail.error}</p>`;
  if (!d) return html`<p>Loading…</p>`;
  const r = d.run;
  return html`
    <${RunSummary} r=${r} />
    ${!session.readOnly && html`<${RunActions} r=${r} reload=${detail.reload} />`}
    <${RunValues} r=${r} />
    <${StepTimeline} detail=${d} from=${from} goTo=${setFrom} />
    <div class="cols">
      <${PendingWaits} steps=${d.steps} />
      <${EventsTable} events=${d.events} />
    </div>
    ${!session.readOnly && (r.state === "running" || r.state === "blocked") && html`<${SendEventForm} id=${r.workflowId} reload=${detail.reload} />`}
    <section>
      <h2>Child runs</h2>
      <${ChildList} key=${d.children.items.map((c) => c.workflowId + c.state).join()} parentId=${r.workflowId} first=${d.children} />
    </section>
  `;
}
