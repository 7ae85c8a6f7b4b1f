/** The work selected on the pool page for a bulk action. */
import { useState } from "preact/hooks";

/** The selected ids, and the ways to change them. */
export interface Selection {
  ids: ReadonlySet<string>;
  /** Selects `id`, or unselects it when it is selected. */
  toggle(id: string): void;
  /** Selects every id of `ids`, or unselects them all when every one is selected. */
  togglePage(ids: string[]): void;
  clear(): void;
}

/** Whether every id of `ids` (at least one) is selected. */
export function allSelected(selection: Selection, ids: string[]): boolean {
  return ids.length > 0 && ids.every((id) => selection.ids.has(id));
}

/** A selection, empty at first. */
export function useSelection(): Selection {
  const [ids, setIds] = useState<ReadonlySet<string>>(new Set());
  const selection: Selection = {
    ids,
    toggle: (id) => {
      const next = new Set(ids);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      setIds(next);
    },
    togglePage: (page) => {
      const all = allSelected(selection, page);
      const next = new Set(ids);
      for (const id of page) {
        if (all) next.delete(id);
        else next.add(id);
      }
      setIds(next);
    },
    clear: () => setIds(new Set()),
  };
  return selection;
}
