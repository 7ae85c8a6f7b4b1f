/** The bar above the work list: how many are selected, and cancel or retry them together. */
import { html } from "htm/preact";
import type { RunBulk } from "./runner.js";

/** The bulk bar for `count` selected work; its buttons are off while nothing is selected. */
export function BulkBar({ count, runBulk }: { count: number; runBulk: RunBulk }) {
  return html`<div class="bulk">
    <span>${count} selected</span>
    <button disabled=${count === 0} onClick=${() => runBulk(`Cancel ${count} work?`, "cancel", "Canceled")}>Cancel selected</button>
    <button disabled=${count === 0} onClick=${() => runBulk("", "retry", "Retried")}>Retry selected</button>
  </div>`;
}
