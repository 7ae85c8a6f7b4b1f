/** The pool's own actions: pause or resume, set its limit, cancel all unfinished work, purge finished work. */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { act } from "../api.js";
import type { RunAction } from "./runner.js";

/** The action buttons of pool `name` (Resume instead of Pause while it is `paused`), each run through `run`. */
export function PoolActions({ name, paused, run }: { name: string; paused: boolean; run: RunAction }) {
  const [limit, setLimit] = useState("");
  return html`<div class="actions">
    ${
      paused
        ? html`<button onClick=${() => run("", () => act("resume", { pool: name }).then(() => "Resumed."))}>Resume</button>`
        : html`<button onClick=${() => run("", () => act("pause", { pool: name }).then(() => "Paused."))}>Pause</button>`
    }
    <form
      class="inline"
      onSubmit=${(e: Event) => {
        e.preventDefault();
        run("", () => act("set-parallelism", { pool: name, n: Number(limit) }).then(() => `Limit set to ${limit}.`));
      }}
    >
      <input
        name="maxParallelism"
        type="number"
        min="0"
        max="10000"
        required
        placeholder="maxParallelism"
        value=${limit}
        onInput=${(e: Event) => setLimit((e.target as HTMLInputElement).value)}
      />
      <button type="submit">Set limit</button>
    </form>
    <button
      class="danger"
      onClick=${() =>
        run(`Cancel all unfinished work of ${name}?`, () =>
          act<{ count: number }>("cancel-all", { pool: name }).then((r) => `Canceled ${r.count}.`),
        )}
    >
      Cancel all
    </button>
    <button
      class="danger"
      onClick=${() =>
        run(`Delete all finished work of ${name}?`, () =>
          act<{ count: number }>("purge-finished", { pool: name }).then((r) => `Purged ${r.count}.`),
        )}
    >
      Purge finished
    </button>
  </div>`;
}
