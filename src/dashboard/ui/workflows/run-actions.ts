/**
 * A run's actions, each asked for confirmation first: cancel (with its child runs), restart
 * from entry N (failed, canceled or blocked runs that are not child runs), fork from entry
 * N (as a new run, linked once made) and skip the entry a blocked run is blocked at.
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { act, type WorkflowRunDetail } from "../api.js";
import { useNotice } from "../shared/hooks.js";
import { href } from "../shared/route.js";

type Run = WorkflowRunDetail["run"];

/** An entry number input, 0 to the run's step count. */
function EntryInput({ name, value, max, onInput }: { name: string; value: string; max: number; onInput: (v: string) => void }) {
  return html`<input
    name=${name}
    type="number"
    min="0"
    max=${max}
    required
    aria-label=${`${name} from entry`}
    value=${value}
    onInput=${(e: Event) => onInput((e.target as HTMLInputElement).value)}
  />`;
}

/** The buttons for run `r` and the last action's outcome; `reload` reads the run again. */
export function RunActions({ r, reload }: { r: Run; reload: () => void }) {
  const [notice, show] = useNotice();
  const [forked, setForked] = useState<string | null>(null);
  const first = String(r.blocked?.n ?? 0);
  const [restartFrom, setRestartFrom] = useState(first);
  const [forkFrom, setForkFrom] = useState(first);
  const unfinished = (r.state === "running" || r.state === "blocked") && !r.cancelRequested;
  const restartable = r.parentId === null && (r.state === "failed" || r.state === "canceled" || r.state === "blocked");
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
  const restart = (e: Event): void => {
    e.preventDefault();
    run(`Restart run ${r.workflowId} from entry ${restartFrom}? Entries from ${restartFrom} on are dropped and run again.`, () =>
      act("workflow-restart", { id: r.workflowId, from: Number(restartFrom) }).then(() => `Restarted from entry ${restartFrom}.`),
    );
  };
  const fork = (e: Event): void => {
    e.preventDefault();
    setForked(null);
    run(`Fork run ${r.workflowId} from entry ${forkFrom} as a new run?`, () =>
      act<{ newId: string }>("workflow-fork", { id: r.workflowId, from: Number(forkFrom) }).then((a) => {
        setForked(a.newId);
        return `Forked from entry ${forkFrom}.`;
      }),
    );
  };
  const skip = (): void =>
    run(`Skip entry ${r.blocked?.n ?? "?"} of run ${r.workflowId}? The run goes on without it.`, () =>
      act("workflow-skip", { id: r.workflowId }).then(() => `Skipped entry ${r.blocked?.n ?? "?"}.`),
    );
  return html`
    <div class="actions run-actions">
      ${unfinished && html`<button class="danger" onClick=${cancel}>Cancel run</button>`}
      ${r.state === "blocked" && html`<button onClick=${skip}>Skip blocked entry</button>`}
      ${
        restartable &&
        html`<form class="inline" onSubmit=${restart}>
          <${EntryInput} name="restart" value=${restartFrom} max=${r.steps} onInput=${setRestartFrom} />
          <button type="submit">Restart from entry</button>
        </form>`
      }
      <form class="inline" onSubmit=${fork}>
        <${EntryInput} name="fork" value=${forkFrom} max=${r.steps} onInput=${setForkFrom} />
        <button type="submit">Fork from entry</button>
      </form>
    </div>
    ${notice && html`<p class="notice" role="status">${notice}</p>`}
    ${forked && html`<p>New run: <a class="mono forked" href=${href.run(forked)}>${forked}</a></p>`}
  `;
}
