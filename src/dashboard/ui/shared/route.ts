/** The hash route, and the links to each page. */
import { useEffect, useState } from "preact/hooks";

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

/** The link to the overview, a pool's page, a work's page, the workflow runs or one run's page. */
export const href = {
  overview: () => "#/",
  pool: (name: string) => `#/pool/${encodeURIComponent(name)}`,
  work: (id: string) => `#/work/${encodeURIComponent(id)}`,
  workflows: () => "#/workflows",
  run: (id: string) => `#/run/${encodeURIComponent(id)}`,
};
