/**
 * A pool's page: its counts and limit, its actions (pause/resume, limit, cancel all, purge
 * finished), and its work list with filters, search, keyset pages and bulk cancel / retry.
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { act, api, type BulkAnswer, type Session } from "./api.js";
import { BulkOutcome, type BulkOutcomeData } from "./bulk.js";
import { LiveChart } from "./chart.js";
import { duration, stateOf, when } from "./format.js";
import { href, usePoll } from "./hooks.js";
import { limitText } from "./overview.js";

const STATES = ["", "pending", "retrying", "running", "finished", "success", "failed", "canceled"];

interface Filter {
  state: string;
  handler: string;
  key: string;
  search: string;
}

const EMPTY: Filter = { state: "", handler: "", key: "", search: "" };

/** The outcome line of the last action (null: none, or shown elsewhere). */
function useNotice(): [string | null, (p: Promise<string | null>) => void] {
  const [notice, setNotice] = useState<string | null>(null);
  return [
    notice,
    (p) => {
      setNotice(null);
      p.then(setNotice, (e: unknown) => setNotice(`Error: ${e instanceof Error ? e.message : String(e)}`));
    },
  ];
}

/** The pool page. */
export function PoolPage({ name, session }: { name: string; session: Session }) {
  const [form, setForm] = useState<Filter>(EMPTY);
  const [filter, setFilter] = useState<Filter>(EMPTY);
  // Cursors of the pages before this one: the admin's keyset cursor only goes forward.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [limit, setLimit] = useState("");
  const [notice, show] = useNotice();
  const [bulk, setBulk] = useState<BulkOutcomeData | null>(null);
  const cursor = cursors[cursors.length - 1];

  const pools = usePoll(api.pools, []);
  const series = usePoll(() => api.series(name), [name]);
  const page = usePoll(() => api.list(name, { ...filter, cursor }), [name, filter, cursor]);
  const pool = pools.data?.find((p) => p.name === name);
  const items = page.data?.items ?? [];

  const run = (what: string, action: () => Promise<string>): void => {
    if (what && !confirm(what)) return;
    setBulk(null);
    show(
      action().then((text) => {
        pools.reload();
        page.reload();
        return text;
      }),
    );
  };
  /** A bulk action on the selected ids: its outcome is shown item by item, and the selection cleared. */
  const runBulk = (what: string, name: "cancel" | "retry", verb: string): void => {
    if (what && !confirm(what)) return;
    setBulk(null);
    show(
      act<BulkAnswer>(name, { ids: [...selected] }).then((answer) => {
        setBulk({ verb, answer });
        setSelected(new Set());
        pools.reload();
        page.reload();
        return null;
      }),
    );
  };
  const toggle = (id: string): void => {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setSelected(next);
  };
  const allOnPage = items.length > 0 && items.every((w) => selected.has(w.id));

  return html`
    <p><a href=${href.overview()}>Pools</a> /</p>
    <h1>Pool <span class="mono">${name}</span></h1>
    ${
      pool &&
      html`<p class="summary">
        Limit <b data-limit>${limitText(pool)}</b> ·
        ${Object.entries(pool.counts).map(([k, v]) => html`<span class="count" data-count=${k}>${k} <b>${v}</b></span> `)} · oldest pending
        ${pool.oldestPendingAgeMs === null ? "–" : duration(pool.oldestPendingAgeMs)}
      </p>`
    }
    ${
      !session.readOnly &&
      pool &&
      html`<div class="actions">
        ${
          pool.pausedFrom === null
            ? html`<button onClick=${() => run("", () => act("pause", { pool: name }).then(() => "Paused."))}>Pause</button>`
            : html`<button onClick=${() => run("", () => act("resume", { pool: name }).then(() => "Resumed."))}>Resume</button>`
        }
        <form
          class="inline"
          onSubmit=${(e: Event) => {
            e.preventDefault();
            run("", () => act("set-parallelism", { pool: name, n: Number(limit) }).then(() => `Limit set to ${limit}.`));
          }}
        >
          <input
            name="maxParallelism"
            type="number"
            min="0"
            max="10000"
            required
            placeholder="maxParallelism"
            value=${limit}
            onInput=${(e: Event) => setLimit((e.target as HTMLInputElement).value)}
          />
          <button type="submit">Set limit</button>
        </form>
        <button
          class="danger"
          onClick=${() =>
            run(`Cancel all unfinished work of ${name}?`, () =>
              act<{ count: number }>("cancel-all", { pool: name }).then((r) => `Canceled ${r.count}.`),
            )}
        >
          Cancel all
        </button>
        <button
          class="danger"
          onClick=${() =>
            run(`Delete all finished work of ${name}?`, () =>
              act<{ count: number }>("purge-finished", { pool: name }).then((r) => `Purged ${r.count}.`),
            )}
        >
          Purge finished
        </button>
      </div>`
    }
    ${notice && html`<p class="notice" role="status">${notice}</p>`} ${bulk && html`<${BulkOutcome} outcome=${bulk} />`}
    <${LiveChart} series=${series.data} />
    <form
      class="filters"
      onSubmit=${(e: Event) => {
        e.preventDefault();
        setFilter(form);
        setCursors([undefined]);
        setSelected(new Set());
      }}
    >
      <select name="state" value=${form.state} onChange=${(e: Event) => setForm({ ...form, state: (e.target as HTMLSelectElement).value })}>
        ${STATES.map((s) => html`<option value=${s}>${s || "any state"}</option>`)}
      </select>
      ${(["handler", "key", "search"] as const).map(
        (k) =>
          html`<input
            name=${k}
            placeholder=${k === "search" ? "work id or name prefix" : k}
            value=${form[k]}
            onInput=${(e: Event) => setForm({ ...form, [k]: (e.target as HTMLInputElement).value })}
          />`,
      )}
      <button type="submit">Filter</button>
    </form>
    ${page.error && html`<p class="error">${page.error}</p>`}
    ${
      !session.readOnly &&
      html`<div class="bulk">
        <span>${selected.size} selected</span>
        <button disabled=${selected.size === 0} onClick=${() => runBulk(`Cancel ${selected.size} work?`, "cancel", "Canceled")}>
          Cancel selected
        </button>
        <button disabled=${selected.size === 0} onClick=${() => runBulk("", "retry", "Retried")}>Retry selected</button>
      </div>`
    }
    <table class="work">
      <thead>
        <tr>
          ${
            !session.readOnly &&
            html`<th>
              <input
                type="checkbox"
                aria-label="select page"
                checked=${allOnPage}
                onChange=${() => {
                  const next = new Set(selected);
                  for (const w of items) {
                    if (allOnPage) next.delete(w.id);
                    else next.add(w.id);
                  }
                  setSelected(next);
                }}
              />
            </th>`
          }
          <th>Id</th>
          <th>Handler</th>
          <th>Name</th>
          <th>State</th>
          <th class="num">Attempts</th>
          <th>Key</th>
          <th>Enqueued</th>
          <th>Started</th>
          <th>Finished</th>
        </tr>
      </thead>
      <tbody>
        ${items.map(
          (w) =>
            html`<tr data-id=${w.id} data-state=${stateOf(w)}>
              ${
                !session.readOnly &&
                html`<td>
                  <input type="checkbox" aria-label=${`select ${w.id}`} checked=${selected.has(w.id)} onChange=${() => toggle(w.id)} />
                </td>`
              }
              <td class="mono"><a href=${href.work(w.id)}>${w.id}</a></td>
              <td>${w.handler}</td>
              <td>${w.name ?? ""}</td>
              <td class=${`state ${stateOf(w)}`}>${stateOf(w)}</td>
              <td class="num">${w.attempts}</td>
              <td>${w.key ?? ""}</td>
              <td>${when(w.enqueuedAt)}</td>
              <td>${when(w.startedAt)}</td>
              <td>${when(w.finishedAt)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    ${page.data && items.length === 0 && html`<p>No work matches.</p>`}
    <div class="pager">
      <button disabled=${cursors.length === 1} onClick=${() => setCursors(cursors.slice(0, -1))}>Newer</button>
      <button disabled=${!page.data?.cursor} onClick=${() => page.data?.cursor && setCursors([...cursors, page.data.cursor])}>Older</button>
    </div>
  `;
}
