/**
 * The form that sends an event to a run: a name and an optional JSON payload, checked in
 * the page before anything is sent (the server checks them again).
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { act } from "../api.js";
import { useNotice } from "../shared/hooks.js";

const EVENT_NAME = /^[A-Za-z0-9_.:\-/]{1,200}$/;

/** What is wrong with the form's name and payload text, or the payload to send (undefined: none). */
export function checkEventForm(name: string, payload: string): { error: string } | { payload: unknown } {
  if (!EVENT_NAME.test(name)) return { error: "name: 1 to 200 characters of letters, digits and _ . : - /" };
  if (payload.trim() === "") return { payload: undefined };
  try {
    return { payload: JSON.parse(payload) as unknown };
  } catch (e) {
    return { error: `payload: not JSON (${e instanceof Error ? e.message : String(e)})` };
  }
}

/** Sends an event to run `id`; `reload` reads the run again once it was sent. */
export function SendEventForm({ id, reload }: { id: string; reload: () => void }) {
  const [name, setName] = useState("");
  const [payload, setPayload] = useState("");
  const [notice, show] = useNotice();
  const [invalid, setInvalid] = useState<string | null>(null);
  const submit = (e: Event): void => {
    e.preventDefault();
    const checked = checkEventForm(name, payload);
    if ("error" in checked) return setInvalid(checked.error);
    setInvalid(null);
    const body: Record<string, unknown> = { id, name };
    if (checked.payload !== undefined) body.payload = checked.payload;
    show(
      act("workflow-send-event", body).then(() => {
        reload();
        setPayload("");
        return `Event ${name} sent.`;
      }),
    );
  };
  return html`<section>
    <h2>Send an event</h2>
    <form class="send-event" onSubmit=${submit}>
      <input
        name="event-name"
        placeholder="event name"
        value=${name}
        onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)}
      />
      <textarea
        name="event-payload"
        rows="3"
        placeholder="payload as JSON (optional)"
        value=${payload}
        onInput=${(e: Event) => setPayload((e.target as HTMLTextAreaElement).value)}
      ></textarea>
      <button type="submit">Send event</button>
    </form>
    ${invalid && html`<p class="error" role="alert">${invalid}</p>`} ${notice && html`<p class="notice" role="status">${notice}</p>`}
  </section>`;
}
