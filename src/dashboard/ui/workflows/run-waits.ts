/** What a run waits on (open sleeps and event waits, with when they are due) and the events sent to it, taken or waiting. */
import { html } from "htm/preact";
import type { WorkflowEventInfo, WorkflowStepDetail } from "../api.js";
import { when } from "../shared/format.js";
import { shortJson } from "./run-format.js";

/** The open sleeps and event waits among `steps` (the journal page shown). */
export function PendingWaits({ steps }: { steps: WorkflowStepDetail[] }) {
  const open = steps.filter((s) => (s.kind === "sleep" || s.kind === "event") && s.finishedAt === null);
  return html`<section>
    <h2>Waiting on</h2>
    ${
      open.length === 0
        ? html`<p>No open sleep or event wait.</p>`
        : html`<ul class="waits">
            ${open.map(
              (s) =>
                html`<li data-wait=${s.n}>
                  ${`entry ${s.n}: `}
                  ${
                    s.kind === "sleep"
                      ? html`${"sleep, wakes at "}<span class="wake-at">${when(s.wakeAt)}</span>`
                      : html`${"event "}<b class="wait-name">${s.name}</b>${", "}
                          ${s.wakeAt === undefined ? "no timeout" : html`${"times out at "}<span class="wake-at">${when(s.wakeAt)}</span>`}`
                  }
                </li>`,
            )}
          </ul>`
    }
  </section>`;
}

/** The newest events sent to the run: name, payload as text, when sent, and the entry that took it (or waiting). */
export function EventsTable({ events }: { events: WorkflowEventInfo[] }) {
  return html`<section>
    <h2>Events</h2>
    ${
      events.length === 0
        ? html`<p>None sent.</p>`
        : html`<table class="events">
            <thead>
              <tr>
                <th class="num">Seq</th>
                <th>Name</th>
                <th>Payload</th>
                <th>Sent</th>
                <th>Taken</th>
              </tr>
            </thead>
            <tbody>
              ${events.map(
                (e) =>
                  html`<tr data-event=${e.seq} data-taken=${e.consumedStep !== null}>
                    <td class="num">${e.seq}</td>
                    <td class="event-name">${e.name}</td>
                    <td><code class="event-payload">${shortJson(e.payload, 200)}</code></td>
                    <td>${when(e.sentAt)}</td>
                    <td>${e.consumedStep === null ? "waiting" : `by entry ${e.consumedStep}`}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
  </section>`;
}
