/** A run's actions, each asked for confirmation first: cancel (with its child runs). */
import { html } from "htm/preact";
import { act, type WorkflowRunDetail } from "../api.js";
import { useNotice } from "../shared/hooks.js";

type Run = WorkflowRunDetail["run"];

/** The buttons for run `r` and the last action's outcome; `reload` reads the run again. */
export function RunActions({ r, reload }: { r: Run; reload: () => void }) {
  const [notice, show] = useNotice();
  const unfinished = (r.state === "running" || r.state === "blocked") && !r.cancelRequested;
  const run = (question: string, action: () => Promise<string>): void => {
    if (!confirm(question)) return;
    show(
      action().then((text) => {
        reload();
        return text;
      }),
    );
  };
  const cancel = (): void =>
    run(`Cancel run ${r.workflowId} and its child runs?`, () =>
      act<{ canceled: boolean; reason?: string }>("workflow-cancel", { id: r.workflowId }).then((a) =>
        a.canceled ? "Cancel requested: a worker of the pool carries it out." : `Not canceled: ${a.reason ?? "no answer"}`,
      ),
    );
  return html`
    <div class="actions run-actions">${unfinished && html`<button class="danger" onClick=${cancel}>Cancel run</button>`}</div>
    ${notice && html`<p class="notice" role="status">${notice}</p>`}
  `;
}
