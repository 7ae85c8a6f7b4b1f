/** The dashboard's browser app: a hash router over the overview, pool, work, workflows and run pages. */
import { html } from "htm/preact";
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { getSession, type Session } from "./api.js";
import { Overview } from "./overview/overview-page.js";
import { PoolPage } from "./pool/pool-page.js";
import { errorText } from "./shared/format.js";
import { href, useRoute } from "./shared/route.js";
// After the chart's stylesheet (imported by the pages), so the app's rules win.
import "./style.css";
import { WorkPage } from "./work/work-page.js";
import { RunPage } from "./workflows/run-page.js";
import { WorkflowsPage } from "./workflows/workflows-page.js";

function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    getSession().then(setSession, (e: unknown) => setError(errorText(e)));
  }, []);
  const [, page, arg] = route.split("/");
  const value = arg === undefined ? "" : decodeURIComponent(arg);
  let body;
  if (error) body = html`<p class="error">${error}</p>`;
  else if (!session) body = html`<p>Loading…</p>`;
  else if (page === "pool") body = html`<${PoolPage} key=${value} name=${value} session=${session} />`;
  else if (page === "work") body = html`<${WorkPage} key=${value} id=${value} session=${session} />`;
  else if (page === "workflows") body = html`<${WorkflowsPage} />`;
  else if (page === "run") body = html`<${RunPage} key=${value} id=${value} session=${session} />`;
  else body = html`<${Overview} />`;
  return html`<header>
      <a class="brand" href=${href.overview()}>workpool</a>
      <nav><a href=${href.overview()}>Pools</a> <a href=${href.workflows()}>Workflows</a></nav>
      ${session?.readOnly && html`<span class="badge">read-only</span>`}
    </header>
    <main>${body}</main>`;
}

render(html`<${App} />`, document.getElementById("app")!);
