// Aggregation (median, min–max), the printed table, and RESULTS.md.
import { existsSync, readFileSync } from "node:fs";
import { BATCH_SIZE, BACKLOG_CONCURRENCY, DRAIN_CONCURRENCIES, FILL_BATCH_SIZE, LATENCY_CONCURRENCY } from "./env.mjs";

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Compact number: 931, 2.95k, 12.3k, 158k; ms with one decimal under 10. */
export function fmt(v, unit) {
  if (v === null || v === undefined || Number.isNaN(v)) return "–";
  if (unit === "ms") return v < 10 ? v.toFixed(1) : Math.round(v).toLocaleString("en-US");
  if (unit === "MB") return Math.round(v).toString();
  if (unit === "%") return Math.round(v).toString();
  const a = Math.abs(v);
  if (a >= 100_000) return `${Math.round(v / 1000)}k`;
  if (a >= 10_000) return `${(v / 1000).toFixed(1)}k`;
  if (a >= 1000) return `${(v / 1000).toFixed(2)}k`;
  if (a >= 100) return Math.round(v).toString();
  return v.toFixed(1);
}

/** "median (min–max)" when there is more than one value; a dagger when a run was capped. */
export function cell(agg, unit) {
  if (!agg) return "n/a";
  const mark = agg.capped.length ? "†" : "";
  if (agg.values.length < 2) return `${fmt(agg.median, unit)}${mark}`;
  return `${fmt(agg.median, unit)} (${fmt(agg.min, unit)}–${fmt(agg.max, unit)})${mark}`;
}

export function aggregate(values, capped) {
  return { values, median: median(values), min: Math.min(...values), max: Math.max(...values), capped };
}

/** ours / peer, and whether that is a win for ours given the metric's direction. */
export function ratio(ours, peer, better) {
  if (!ours || !peer || !peer.median || !ours.median) return null;
  const r = ours.median / peer.median;
  return { r, win: better === "higher" ? r > 1 : r < 1 };
}

function fmtRatio(x) {
  if (!x) return "n/a";
  const r = x.r >= 10 ? x.r.toFixed(0) : x.r >= 1 ? x.r.toFixed(1) : x.r >= 0.01 ? x.r.toFixed(2) : x.r.toPrecision(1);
  return `${r}× ${x.win ? "✓" : "✗"}`;
}

function pad(s, n, right = false) {
  const len = [...s].length;
  return right ? " ".repeat(Math.max(0, n - len)) + s : s + " ".repeat(Math.max(0, n - len));
}

/** The one printed table: metrics as rows, systems as columns. */
export function textTable(run) {
  const systems = run.systems.filter((s) => !s.skipped);
  const head = ["", ...systems.map((s) => s.label)];
  const rows = [];
  for (const m of run.metrics) {
    const betterWord = m.better === "higher" ? "↑" : "↓";
    rows.push([`${m.short} (${m.unit} ${betterWord})`, ...systems.map((s) => cell(run.results[m.key]?.[s.id], m.unit))]);
  }
  const widths = head.map((h, i) => Math.max([...h].length, ...rows.map((r) => [...r[i]].length)));
  const line = (r) => r.map((c, i) => pad(c, widths[i], i > 0)).join("  ");
  const out = [line(head), widths.map((w) => "─".repeat(w)).join("  "), ...rows.map(line)];
  return out.join("\n");
}

function mdTable(head, rows) {
  return [`| ${head.join(" | ")} |`, `|${head.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");
}

export function resultsTableMd(run) {
  const systems = run.systems.filter((s) => !s.skipped);
  return mdTable(
    ["", ...systems.map((s) => s.label)],
    run.metrics.map((m) => [`${m.labelText} (${m.unit}, ${m.better} is better)`, ...systems.map((s) => cell(run.results[m.key]?.[s.id], m.unit))]),
  );
}

export function ratioTablesMd(run) {
  const ours = run.systems.filter((s) => s.ours && !s.skipped);
  const peers = run.systems.filter((s) => !s.ours && !s.skipped && !s.id.startsWith("workpool"));
  return ours
    .map((o) => {
      const t = mdTable(
        ["", ...peers.map((p) => `${o.label} / ${p.label}`)],
        run.metrics.map((m) => [`${m.short} (${m.better} is better)`, ...peers.map((p) => fmtRatio(ratio(run.results[m.key]?.[o.id], run.results[m.key]?.[p.id], m.better)))]),
      );
      return `#### ${o.label} / each peer\n\n${t}`;
    })
    .join("\n\n");
}

/** Ratios as data, for latest.json and the README. */
export function ratioData(run) {
  const ours = run.systems.filter((s) => s.ours && !s.skipped);
  const peers = run.systems.filter((s) => !s.ours && !s.skipped && !s.id.startsWith("workpool"));
  const out = {};
  for (const o of ours) {
    for (const p of peers) {
      const key = `${o.id}/${p.id}`;
      out[key] = {};
      for (const m of run.metrics) {
        const x = ratio(run.results[m.key]?.[o.id], run.results[m.key]?.[p.id], m.better);
        if (x) out[key][m.key] = { ratio: Math.round(x.r * 1000) / 1000, oursBetter: x.win };
      }
    }
  }
  return out;
}

/** One line per system and workload that hit a time cap: how many runs, and how far they got. */
export function cappedLines(run) {
  const seen = new Map();
  for (const m of run.metrics) {
    for (const s of run.systems) {
      const agg = run.results[m.key]?.[s.id];
      if (!agg?.capped?.length) continue;
      const key = `${s.label}, ${m.workload}`;
      if (!seen.has(key)) seen.set(key, `${key}: ${agg.capped.length} of ${agg.values.length} run${agg.values.length > 1 ? "s" : ""} (${agg.capped.join("; ")})`);
    }
  }
  return [...seen.values()];
}

const NOTES_START = "<!-- notes:start -->";
const NOTES_END = "<!-- notes:end -->";

/** Hand-written notes between the markers survive regeneration of RESULTS.md. */
function keptNotes(path) {
  if (!existsSync(path)) return null;
  const text = readFileSync(path, "utf8");
  const a = text.indexOf(NOTES_START);
  const b = text.indexOf(NOTES_END);
  return a >= 0 && b > a ? text.slice(a, b + NOTES_END.length) : null;
}

export function resultsMd(run, path) {
  const m = run.machine;
  const mode = run.modeConfig;
  const pg = m.postgres
    ? Object.entries(m.postgres)
        .map(([k, v]) => `${k}=${v}`)
        .join(", ")
    : "not used";
  const redis = m.redis
    ? `Redis ${m.redis.version}: appendonly=${m.redis.appendonly}, appendfsync=${m.redis.appendfsync}, save=${m.redis.save}, maxmemory-policy=${m.redis["maxmemory-policy"]}`
    : "not used";
  const cr = run.commitRates;
  const crRow = (label, v, note) => `| ${label} | ${v === undefined ? "n/a" : fmt(v, "jobs/s")} | ${note} |`;
  const skipped = run.systems.filter((s) => s.skipped);
  const sys = run.systems
    .filter((s) => !s.skipped)
    .map((s) => `- **${s.label}** (${s.packageName} ${s.version}), ${s.store}; durability: ${s.durability}.\n  ${s.config}`)
    .join("\n");
  const notes =
    keptNotes(path) ??
    `${NOTES_START}\n## Why the losses\n\n_Not written yet: explain each metric where a peer wins._\n${NOTES_END}`;
  return `# Benchmark results

Generated by \`npm run bench${run.mode === "quick" ? " -- --quick" : ""}\` (${run.mode} mode) on ${run.startedAt.slice(0, 10)}; the run took ${Math.round(run.durationS / 60)} min.
Raw data: [results/full.json](results/full.json). Method and how to re-run: [README.md](README.md).

Each cell is the median of ${run.reps} interleaved repetition${run.reps > 1 ? "s" : ""} with the min–max in brackets
(the large backlog runs once per system). ↑/“higher is better” marks throughputs, “lower is better” latencies and memory.
† = the run hit its time cap (${mode.enqueueOneCapS} s for enqueue one at a time, ${mode.enqueueBatchCapS} s for enqueue in batches, ${mode.drainCapS} s for a drain,
${mode.backlogCapS} s for the large-backlog drain) and the rate is measured over the time it ran; the caps keep the whole run
within its time budget. Every system runs the same no-op handler in one worker process on the same machine and database
server.

## Results

${resultsTableMd(run)}

${cappedLines(run).length ? "Runs that hit their time cap:\n\n" + cappedLines(run).map((l) => `- ${l}`).join("\n") + "\n" : ""}
## Ratios (ours / peer)

A ratio above 1 means workpool's number is larger; ✓ marks where workpool is better
(larger throughput, smaller latency or memory), ✗ where the peer is.

${ratioTablesMd(run)}

## Physical reference: raw durable commit rate

Single-row INSERT transactions per second from one client, one after another — the
ceiling for any queue that commits each enqueued job on its own.

| store | commits/s | note |
|---|---:|---|
${crRow("SQLite file, WAL, synchronous=FULL", cr.sqliteFull, "fsync per commit: what workpool SQLite uses by default")}
${crRow("SQLite file, WAL, synchronous=NORMAL", cr.sqliteNormal, "no fsync per commit (plainjob's setting)")}
${crRow("PostgreSQL, autocommit INSERT", cr.postgres, `synchronous_commit=${m.postgres?.synchronous_commit ?? "?"}`)}
${crRow("Redis, SET round trip", cr.redis, "acknowledged from memory: not a durable commit (BullMQ is not durable by default)")}

## Machine and settings

- CPU: ${m.cpu}, ${m.cores} cores; RAM ${m.ramGiB} GiB; ${m.os}
- Node ${m.node}; SQLite ${m.sqlite} (better-sqlite3)
- PostgreSQL: ${pg}
- ${redis}
- Load average at start: ${m.loadAvgAtStart.join(", ")}. Caveat: other work was running on this machine during
  the run (${m.cores} cores shared), so absolute numbers are noisy; the interleaving spreads that noise over all systems.

Workloads: enqueue one at a time (${mode.enqueueOne.toLocaleString("en-US")} jobs, each call awaited); enqueue in batches of ${BATCH_SIZE.toLocaleString("en-US")}
(${mode.enqueueBatch.toLocaleString("en-US")} jobs); drain ${mode.drain.toLocaleString("en-US")} queued no-op jobs (written first by another process) at concurrency ${DRAIN_CONCURRENCIES.join(" and ")} (clock from worker start
until every job is recorded completed); idle enqueue→start latency (${mode.latencyJobs} jobs ${mode.latencyIntervalMs} ms apart, concurrency ${LATENCY_CONCURRENCY},
from just before the enqueue call to the handler's first line); large backlog (${mode.backlog.toLocaleString("en-US")} queued in batches of ${FILL_BATCH_SIZE.toLocaleString("en-US")}, then drained at
concurrency ${BACKLOG_CONCURRENCY} for at most ${mode.backlogCapS} s: rate over the first and the last 20% of that drain, with the table
holding the backlog throughout; compare with the ${mode.drain.toLocaleString("en-US")}-job drain at c=100 to see what the table size costs);
peak RSS of the worker process (\`process.resourceUsage().maxRSS\` of the child process that ran only the c=100 drain; the
backlog is written by another child first); longest event-loop stall of that process during the drain (the longest gap
between ticks of a 10 ms timer: how long the application's own timers and I/O had to wait).

### Systems and their configuration

${sys}
${skipped.length ? "\nSkipped on this run: " + skipped.map((s) => `${s.label} (${s.skipped})`).join("; ") + ".\n" : ""}
${notes}
`;
}
