/** Shared hooks: polling a read, and the outcome line of the last action. */
import { useEffect, useState } from "preact/hooks";
import { errorText } from "./format.js";

/** How often live views read again, ms. */
export const POLL_MS = 1500;

/** A polled read: its latest data (kept while a later read fails), its error, and a way to read again at once. */
export interface Poll<T> {
  data: T | null;
  error: string | null;
  reload: () => void;
}

/** A read that runs now and every POLL_MS while mounted; `deps` restart it. `reload()` reads at once. */
export function usePoll<T>(read: () => Promise<T>, deps: unknown[]): Poll<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = (): void => {
      read().then(
        (d) => {
          if (!live) return;
          setData(d);
          setError(null);
        },
        (e: unknown) => live && setError(errorText(e)),
      );
      timer = setTimeout(run, POLL_MS);
    };
    run();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [...deps, tick]);
  return { data, error, reload: () => setTick((n) => n + 1) };
}

/**
 * The outcome line of the last action, and `show(p)`: clears it, then shows what `p`
 * resolves to (null: nothing, the outcome is shown elsewhere) or "Error: …" when it fails.
 */
export function useNotice(): [string | null, (p: Promise<string | null>) => void] {
  const [notice, setNotice] = useState<string | null>(null);
  return [
    notice,
    (p) => {
      setNotice(null);
      p.then(setNotice, (e: unknown) => setNotice(`Error: ${errorText(e)}`));
    },
  ];
}
