/** Shared hooks: polling a read, and the hash route. */
import { useEffect, useState } from "preact/hooks";

/** How often live views read again, ms. */
export const POLL_MS = 1500;

/** A read that runs now and every POLL_MS while mounted; `deps` restart it. `reload()` reads at once. */
export function usePoll<T>(read: () => Promise<T>, deps: unknown[]): { data: T | null; error: string | null; reload: () => void } {
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
        (e: unknown) => live && setError(e instanceof Error ? e.message : String(e)),
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

/** The current route: the part of location.hash after "#". */
export function useRoute(): string {
  const [route, setRoute] = useState(location.hash.slice(1) || "/");
  useEffect(() => {
    const on = (): void => setRoute(location.hash.slice(1) || "/");
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}

/** The link to a pool's page or a work's page. */
export const href = {
  overview: () => "#/",
  pool: (name: string) => `#/pool/${encodeURIComponent(name)}`,
  work: (id: string) => `#/work/${encodeURIComponent(id)}`,
};
