/**
 * How the pool page runs an action: ask first when there is a question, then show its
 * outcome (a line, or a bulk action's item-by-item outcome) and read the page again.
 */
import { useState } from "preact/hooks";
import { act, type BulkAnswer } from "../api.js";
import { useNotice } from "../shared/hooks.js";
import type { BulkOutcomeData } from "./bulk-outcome.js";
import type { Selection } from "./selection.js";

/** Runs `action` once `question` (if any) is confirmed; what it resolves to is the outcome line. */
export type RunAction = (question: string, action: () => Promise<string>) => void;

/** Runs a bulk cancel or retry of the selected work once `question` (if any) is confirmed; `verb` names it in the outcome. */
export type RunBulk = (question: string, name: "cancel" | "retry", verb: string) => void;

/** The outcome of the last action, and the two ways to run one. */
export interface PoolRunner {
  notice: string | null;
  bulk: BulkOutcomeData | null;
  run: RunAction;
  runBulk: RunBulk;
}

/** The pool page's runner: `reload` reads the page again after each action. */
export function usePoolRunner(selection: Selection, reload: () => void): PoolRunner {
  const [notice, show] = useNotice();
  const [bulk, setBulk] = useState<BulkOutcomeData | null>(null);
  const run: RunAction = (question, action) => {
    if (question && !confirm(question)) return;
    setBulk(null);
    show(
      action().then((text) => {
        reload();
        return text;
      }),
    );
  };
  // A bulk action's outcome is shown item by item, and the selection cleared.
  const runBulk: RunBulk = (question, name, verb) => {
    if (question && !confirm(question)) return;
    setBulk(null);
    show(
      act<BulkAnswer>(name, { ids: [...selection.ids] }).then((answer) => {
        setBulk({ verb, answer });
        selection.clear();
        reload();
        return null;
      }),
    );
  };
  return { notice, bulk, run, runBulk };
}
