/**
 * A work's page: args, context, result, onComplete, and every kept attempt with its error
 * (message, name, stack) on a timeline; cancel and retry. All user data is shown as text.
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { act, api, type AttemptRecord, type BulkAnswer, type Session, type WorkDetail } from "./api.js";
import { duration, json, stateOf, when } from "./format.js";
import { href, usePoll } from "./hooks.js";

function Timeline({ w }: { w: WorkDetail }) {
  const start = w.enqueuedAt;
  const end = Math.max(w.finishedAt ?? 0, ...w.attemptHistory.map((a) => a.endedAt), start + 1);
  const pct = (t: number): string => `${(((t - start) / (end - start)) * 100).toFixed(2)}%`;
  return html`<div class="timeline" aria-label="attempt timeline">
    ${w.attemptHistory.map((a) => {
      const from = a.startedAt ?? a.endedAt;
      return html`<div class="lane">
        <span class="lane-label">#${a.attempt}</span>
        <span class="lane-track"
          ><span class=${`bar ${a.outcome}`} style=${{ left: pct(from), width: `max(3px, calc(${pct(a.endedAt)} - ${pct(from)}))` }}></span
        ></span>
      </div>`;
    })}
  </div>`;
}

function Result({ w }: { w: WorkDetail }) {
  const r = w.result;
  if (!r) return html`<p>–</p>`;
  if (r.kind === "success") return html`<pre class="value">${json(r.returnValue)}</pre>`;
  if (r.kind === "failed") return html`<pre class="value error-text">${r.error}</pre>`;
  return html`<p>canceled</p>`;
}

/** When an attempt ran, as one line of text. */
function attemptTimes(a: AttemptRecord): string {
  const took = a.startedAt === null ? "" : ` · took ${duration(a.endedAt - a.startedAt)}`;
  return `· started ${when(a.startedAt)} · ended ${when(a.endedAt)}${took}`;
}

/** The work page. */
export function WorkPage({ id, session }: { id: string; session: Session }) {
  const work = usePoll(() => api.work(id), [id]);
  const [notice, setNotice] = useState<string | null>(null);
  const [retried, setRetried] = useState<string | null>(null);
  const w = work.data;
  if (work.error && !w) return html`<p class="error">${work.error}</p>`;
  if (!w) return html`<p>Loading…</p>`;
  const state = stateOf(w);

  const run = (name: "cancel" | "retry"): void => {
    act<BulkAnswer>(name, { ids: [id] }).then(
      ({ results: [r] }) => {
        if (r?.ok && r.newId) setRetried(r.newId);
        setNotice(r?.ok ? (name === "cancel" ? "Cancel requested." : "Retried as new work.") : `Not done: ${r?.error ?? "no answer"}`);
        work.reload();
      },
      (e: unknown) => setNotice(`Error: ${e instanceof Error ? e.message : String(e)}`),
    );
  };

  return html`
    <p><a href=${href.overview()}>Pools</a> / <a href=${href.pool(w.pool)}>${w.pool}</a> /</p>
    <h1><span class="mono">${w.id}</span></h1>
    <p class="summary">
      <span class=${`state ${state}`} data-state=${state}>${state}</span> · ${w.kind} <b>${w.handler}</b>
      ${w.name !== null && html` · name <b class="work-name">${w.name}</b>`} · attempts ${w.attempts}
      ${w.key !== null && html` · key ${w.key}`} ${w.priority !== null && html` · priority ${w.priority}`}
    </p>
    ${
      !session.readOnly &&
      html`<div class="actions">
        ${w.state !== "finished" && html`<button class="danger" onClick=${() => run("cancel")}>Cancel</button>`}
        ${(state === "failed" || state === "canceled") && html`<button onClick=${() => run("retry")}>Retry</button>`}
      </div>`
    }
    ${notice && html`<p class="notice" role="status">${notice}</p>`}
    ${retried && html`<p>New work: <a class="mono" href=${href.work(retried)}>${retried}</a></p>`}
    <dl class="times">
      <dt>Enqueued</dt>
      <dd>${when(w.enqueuedAt)}</dd>
      <dt>Run at</dt>
      <dd>${when(w.runAt)}</dd>
      <dt>Started</dt>
      <dd>${when(w.startedAt)}</dd>
      <dt>Finished</dt>
      <dd>${when(w.finishedAt)}</dd>
      <dt>Timeout</dt>
      <dd>${w.timeoutMs === null ? "–" : duration(w.timeoutMs)}</dd>
      <dt>Retry</dt>
      <dd>${w.retry ? `${w.retry.maxAttempts} attempts, backoff ${duration(w.retry.initialBackoffMs)} × ${w.retry.base}` : "none"}</dd>
    </dl>
    <div class="cols">
      <section>
        <h2>Args</h2>
        <pre class="value" data-field="args">${json(w.args)}</pre>
      </section>
      <section>
        <h2>Context</h2>
        <pre class="value" data-field="context">${json(w.context)}</pre>
      </section>
    </div>
    <section>
      <h2>Result</h2>
      <${Result} w=${w} />
    </section>
    <section>
      <h2>onComplete</h2>
      ${
        w.onComplete
          ? html`<p>${w.onComplete.handler}: <b>${w.onComplete.state}</b>, ${w.onComplete.failedAttempts} failed attempts</p>
              ${w.onComplete.error && html`<pre class="value error-text">${w.onComplete.error}</pre>`}`
          : html`<p>–</p>`
      }
      ${w.onCompleteExcludeKinds.length > 0 && html`<p data-field="exclude">Skipped for: ${w.onCompleteExcludeKinds.join(", ")}</p>`}
    </section>
    ${
      (w.logLevel !== null || w.traceparent !== null) &&
      html`<section>
        <h2>Tracing</h2>
        ${w.logLevel !== null && html`<p data-field="log-level">Log level: ${w.logLevel}</p>`}
        ${w.traceparent !== null && html`<p data-field="traceparent">traceparent: <code>${w.traceparent}</code></p>`}
      </section>`
    }
    <section>
      <h2>Attempts</h2>
      ${w.attemptHistory.length === 0 ? html`<p>None ended yet.</p>` : html`<${Timeline} w=${w} />`}
      ${w.attemptHistory.map(
        (a) =>
          html`<div class="attempt" data-attempt=${a.attempt}>
            <p>
              <b>#${a.attempt}</b> <span class=${`state ${a.outcome}`}>${a.outcome}</span>
              ${attemptTimes(a)}
            </p>
            ${
              a.error &&
              html`<p class="error-text"><b>${a.error.name ?? "Error"}</b>: <span class="error-message">${a.error.message}</span></p>
                ${
                  a.error.stack &&
                  html`<details>
                    <summary>Stack</summary>
                    <pre class="value">${a.error.stack}</pre>
                  </details>`
                }`
            }
          </div>`,
      )}
    </section>
  `;
}
