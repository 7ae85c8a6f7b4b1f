/** The Workflows page's filters: workflow name, state, version, and a creation time range. */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { localTimeMs } from "./run-format.js";

/** What the run list is filtered by ("": any); the times are datetime-local values. */
export interface RunFilter {
  name: string;
  state: string;
  version: string;
  createdAfter: string;
  createdBefore: string;
}

/** No filter. */
export const NO_RUN_FILTER: RunFilter = { name: "", state: "", version: "", createdAfter: "", createdBefore: "" };

const STATES = ["", "running", "canceling", "blocked", "success", "failed", "canceled", "finished", "unfinished"];

/** The filter as the API's query (times as epoch ms). */
export function runQuery(f: RunFilter): Record<string, string | undefined> {
  return {
    name: f.name || undefined,
    state: f.state || undefined,
    version: f.version || undefined,
    createdAfter: localTimeMs(f.createdAfter),
    createdBefore: localTimeMs(f.createdBefore),
  };
}

/** The filter form, starting from `value` (mount it again with a new key to change what it shows); submitting applies it. */
export function RunFilters({ value, onApply }: { value: RunFilter; onApply: (filter: RunFilter) => void }) {
  const [form, setForm] = useState<RunFilter>(value);
  const field = (k: keyof RunFilter) => (e: Event) => setForm({ ...form, [k]: (e.target as HTMLInputElement).value });
  return html`<form
    class="filters run-filters"
    onSubmit=${(e: Event) => {
      e.preventDefault();
      onApply(form);
    }}
  >
    <input name="name" placeholder="workflow" value=${form.name} onInput=${field("name")} />
    <select name="state" value=${form.state} onChange=${field("state")}>
      ${STATES.map((s) => html`<option value=${s}>${s || "any state"}</option>`)}
    </select>
    <input name="version" placeholder="version" value=${form.version} onInput=${field("version")} />
    <label>from <input name="createdAfter" type="datetime-local" value=${form.createdAfter} onInput=${field("createdAfter")} /></label>
    <label>to <input name="createdBefore" type="datetime-local" value=${form.createdBefore} onInput=${field("createdBefore")} /></label>
    <button type="submit">Filter</button>
    <button type="button" onClick=${() => onApply(NO_RUN_FILTER)}>Clear</button>
  </form>`;
}
