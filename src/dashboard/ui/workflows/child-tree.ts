/**
 * A run's child runs as a tree: each child links to its page, and its own children are
 * read when asked for (a page at a time), so a large tree costs nothing until opened.
 */
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { api, type WorkflowListPage, type WorkflowSummary } from "../api.js";
import { errorText } from "../shared/format.js";
import { href } from "../shared/route.js";
import { runState } from "./run-format.js";

/** One child run, with a toggle that shows its children. */
function ChildNode({ r }: { r: WorkflowSummary }) {
  const [open, setOpen] = useState(false);
  const state = runState(r);
  return html`<li data-child=${r.workflowId}>
    <button class="link toggle" aria-expanded=${open} onClick=${() => setOpen(!open)}>${open ? "▾" : "▸"}</button>
    ${" "}<a class="mono" href=${href.run(r.workflowId)}>${r.workflowId}</a>${` ${r.name} `}<span class=${`state ${state}`}>${state}</span>
    ${open && html`<${ChildList} parentId=${r.workflowId} />`}
  </li>`;
}

/** The children of `parentId`: `first` when the page already has them, else read on mount; "More" reads the next page. */
export function ChildList({ parentId, first }: { parentId: string; first?: WorkflowListPage }) {
  const [items, setItems] = useState<WorkflowSummary[]>(first?.items ?? []);
  const [cursor, setCursor] = useState<string | null>(first?.cursor ?? null);
  const [loaded, setLoaded] = useState(first !== undefined);
  const [error, setError] = useState<string | null>(null);
  const read = (after: string | null): void => {
    api.workflows({ parentId, cursor: after ?? undefined }).then(
      (page) => {
        setItems((shown) => (after === null ? page.items : [...shown, ...page.items]));
        setCursor(page.cursor);
        setLoaded(true);
      },
      (e: unknown) => setError(errorText(e)),
    );
  };
  useEffect(() => {
    if (first === undefined) read(null);
  }, [parentId]);
  if (error) return html`<p class="error">${error}</p>`;
  if (!loaded) return html`<p>Loading…</p>`;
  return html`<ul class="children">
    ${items.length === 0 && html`<li class="none">no child runs</li>`}
    ${items.map((r) => html`<${ChildNode} key=${r.workflowId} r=${r} />`)}
    ${cursor !== null && html`<li><button class="link" onClick=${() => read(cursor)}>More</button></li>`}
  </ul>`;
}
