/** The pool page's filters: state, handler, key, and a search by work id or name prefix. */
import { html } from "htm/preact";
import { useState } from "preact/hooks";

/** What the work list is filtered by ("": any). */
export interface Filter {
  state: string;
  handler: string;
  key: string;
  search: string;
}

/** No filter. */
export const EMPTY_FILTER: Filter = { state: "", handler: "", key: "", search: "" };

const STATES = ["", "pending", "retrying", "running", "finished", "success", "failed", "canceled"];

/** The filter form; submitting it applies what it holds. */
export function WorkFilters({ onApply }: { onApply: (filter: Filter) => void }) {
  const [form, setForm] = useState<Filter>(EMPTY_FILTER);
  return html`<form
    class="filters"
    onSubmit=${(e: Event) => {
      e.preventDefault();
      onApply(form);
    }}
  >
    <select name="state" value=${form.state} onChange=${(e: Event) => setForm({ ...form, state: (e.target as HTMLSelectElement).value })}>
      ${STATES.map((s) => html`<option value=${s}>${s || "any state"}</option>`)}
    </select>
    ${(["handler", "key", "search"] as const).map(
      (k) =>
        html`<input
          name=${k}
          placeholder=${k === "search" ? "work id or name prefix" : k}
          value=${form[k]}
          onInput=${(e: Event) => setForm({ ...form, [k]: (e.target as HTMLInputElement).value })}
        />`,
    )}
    <button type="submit">Filter</button>
  </form>`;
}
