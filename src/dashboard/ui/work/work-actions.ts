/** A work's actions: cancel (unfinished work) and retry (failed or canceled work, as new work, linked once made). */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { act, type BulkAnswer, type WorkDetail } from "../api.js";
import { errorText } from "../shared/format.js";
import { href } from "../shared/route.js";

/** The buttons for work `w` (none when `readOnly`), the last action's outcome, and the new work's link; `reload` reads the work again. */
export function WorkActions({ w, state, readOnly, reload }: { w: WorkDetail; state: string; readOnly: boolean; reload: () => void }) {
  const [notice, setNotice] = useState<string | null>(null);
  const [retried, setRetried] = useState<string | null>(null);

  const run = (name: "cancel" | "retry"): void => {
    act<BulkAnswer>(name, { ids: [w.id] }).then(
      ({ results: [r] }) => {
        if (r?.ok && r.newId) setRetried(r.newId);
        setNotice(r?.ok ? (name === "cancel" ? "Cancel requested." : "Retried as new work.") : `Not done: ${r?.error ?? "no answer"}`);
        reload();
      },
      (e: unknown) => setNotice(`Error: ${errorText(e)}`),
    );
  };

  return html`
    ${
      !readOnly &&
      html`<div class="actions">
        ${w.state !== "finished" && html`<button class="danger" onClick=${() => run("cancel")}>Cancel</button>`}
        ${(state === "failed" || state === "canceled") && html`<button onClick=${() => run("retry")}>Retry</button>`}
      </div>`
    }
    ${notice && html`<p class="notice" role="status">${notice}</p>`}
    ${retried && html`<p>New work: <a class="mono" href=${href.work(retried)}>${retried}</a></p>`}
  `;
}
