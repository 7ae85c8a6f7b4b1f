/** Keyset pages through the work list: the admin's cursor only goes forward, so the page keeps the ones it came by. */
import { html } from "htm/preact";
import { useState } from "preact/hooks";

/** The page shown (`cursor`, undefined: the first) and the way back. */
export interface Pages {
  cursor: string | undefined;
  first: boolean;
  newer(): void;
  older(next: string): void;
  reset(): void;
}

/** Pages starting at the first. */
export function usePages(): Pages {
  // The cursors of the pages before this one, and this one's last.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  return {
    cursor: cursors[cursors.length - 1],
    first: cursors.length === 1,
    newer: () => setCursors(cursors.slice(0, -1)),
    older: (next) => setCursors([...cursors, next]),
    reset: () => setCursors([undefined]),
  };
}

/** Newer and Older; `next` is the list's cursor to the following page (null: this is the last). */
export function Pager({ pages, next }: { pages: Pages; next: string | null | undefined }) {
  return html`<div class="pager">
    <button disabled=${pages.first} onClick=${() => pages.newer()}>Newer</button>
    <button disabled=${!next} onClick=${() => next && pages.older(next)}>Older</button>
  </div>`;
}
