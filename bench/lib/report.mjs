// Aggregation (median, min–max), the printed table, and RESULTS.md.
import { serverCostMd } from "./report-server-cost.mjs";

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
  if (unit === "×") return v.toFixed(2);
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
  return [
    `| ${head.join(" | ")} |`,
    `|${head.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
}

export function resultsTableMd(run) {
  const systems = run.systems.filter((s) => !s.skipped);
  return mdTable(
    ["", ...systems.map((s) => s.label)],
    run.metrics.map((m) => [
      `${m.labelText} (${m.unit}, ${m.better} is better)`,
      ...systems.map((s) => cell(run.results[m.key]?.[s.id], m.unit)),
    ]),
  );
}

export function ratioTablesMd(run) {
  const ours = run.systems.filter((s) => s.ours && !s.skipped);
  const peers = run.systems.filter((s) => !s.ours && !s.skipped && !s.id.startsWith("workpool"));
  return ours
    .map((o) => {
      // Metrics only ours report (the CPU against the raw SQL reference) have no ratio to show.
      const compared = run.metrics.filter((m) => peers.some((p) => run.results[m.key]?.[p.id]));
      const t = mdTable(
        ["", ...peers.map((p) => `${o.label} / ${p.label}`)],
        compared.map((m) => [
          `${m.short} (${m.better} is better)`,
          ...peers.map((p) => fmtRatio(ratio(run.results[m.key]?.[o.id], run.results[m.key]?.[p.id], m.better))),
        ]),
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
      if (!seen.has(key))
        seen.set(
          key,
          `${key}: ${agg.capped.length} of ${agg.values.length} run${agg.values.length > 1 ? "s" : ""} (${agg.capped.join("; ")})`,
        );
    }
  }
  return [...seen.values()];
}

/**
 * Why workpool loses where it does: one fixed explanation per metric (or group of
 * metrics), printed under the losses each run finds. Figures belong to the tables and to
 * notes/, not here, so the text stays true from run to run.
 */
const WHY_LOSSES = [
  {
    title: "Enqueue one at a time",
    keys: ["enqueueOne"],
    why: [
      `One durable commit per job. With the flush out of the way (the NORMAL column), workpool`,
      `still does more per job than plainjob: it validates and encodes the JSON args and writes a`,
      `13-column row with a 26-character text key and partial indexes, where plainjob writes 4`,
      `columns with an integer key. The share row compares each system with single-row commits to`,
      `its own store. Where the time of one enqueue goes:`,
      `[notes/postgres-enqueue.md](notes/postgres-enqueue.md).`,
    ],
  },
  {
    title: "Enqueue one at a time, share of raw commits",
    keys: ["enqueueOneOfRaw"],
    why: [
      `workpool's extra cost per enqueue over a plain single-row insert is fixed CPU time`,
      `(validation, encoding, the wider row and its index entries), which weighs more when the`,
      `store commits fast.`,
    ],
  },
  {
    title: "Enqueue in batches, and filling the large backlog",
    keys: ["enqueueBatch", "backlogFill"],
    why: [
      `plainjob inserts a narrow 4-column row without an fsync per commit; workpool validates the`,
      `JSON of every job and writes its wider row, and on SQLite runs its prepared insert once per`,
      `row.`,
    ],
  },
  {
    title: "Drain at concurrency 10",
    keys: ["drain10"],
    why: [
      `workpool keeps \`maxParallelism\` as a *global* limit, counted in the database: at most 10`,
      `attempts are running at any time, so every 10 jobs need a claim committed before they start`,
      `and their results committed before their slots are free again. workpool does both in one`,
      `statement and one commit, so it runs about 10 jobs per (round trip + server work + commit),`,
      `and the claims of a pool queue on its row lock. graphile-worker's concurrency is per`,
      `process, not global: it locks 500 jobs ahead into a local queue and completes them in`,
      `separate batched statements, so its rate hardly depends on the setting. BullMQ does one`,
      `in-memory Redis round trip per job, plainjob one SQLite transaction without fsync. Measured:`,
      `[notes/postgres-drain.md](notes/postgres-drain.md#a-small-maxparallelism).`,
    ],
  },
  {
    title: "Drain at concurrency 100",
    keys: ["drain100"],
    why: [
      `The global limit with 100 slots: results go out in calls of up to about 50, each claiming`,
      `as many new jobs in the same commit, two calls in flight, and the server's CPU per job bounds`,
      `the drain. Per job the server writes two row versions (claim, finish) with their index`,
      `entries and WAL, and keeps the result; graphile-worker does one update and a delete and`,
      `keeps no result. What was measured and tried:`,
      `[notes/postgres-drain.md](notes/postgres-drain.md).`,
    ],
  },
  {
    title: "CPU per job",
    keys: ["enqueueOneCpu", "enqueueBatchCpu", "drain10Cpu", "drain100Cpu"],
    why: [
      `The CPU of the worker or enqueuing process only. On SQLite that process does all the work,`,
      `the database's included; a PostgreSQL or Redis peer does part of its work in the server's`,
      `processes, which this row does not count. How workpool SQLite's CPU per job compares with the`,
      `smallest SQL for the same work: the "× raw SQL" rows and`,
      `[notes/sqlite-hot-path.md](notes/sqlite-hot-path.md).`,
    ],
  },
  {
    title: "Server CPU and WAL per job",
    keys: ["drain10SrvCpu", "drain10Wal", "drain100SrvCpu", "drain100Wal", "drainKeysSrvCpu", "drainKeysWal"],
    why: [
      `What the PostgreSQL server spends on each job over its whole life. workpool writes each job's row`,
      `three times (enqueue, claim, finish) and deletes it later (retention), each version with its index`,
      `entries; graphile-worker locks a batch of jobs ahead and deletes each one on completion, keeping no`,
      `result. Where workpool's server CPU and WAL go, statement by statement:`,
      `[notes/server-cost.md](notes/server-cost.md).`,
    ],
  },
  {
    title: "Longest event-loop stall",
    keys: ["stallMs"],
    why: [
      `workpool SQLite's commits, with their fsync, run on the event loop (better-sqlite3 is`,
      `synchronous), so a slow fsync stalls it. pg-boss fetches one batch per 0.5 s poll and does`,
      `little else, so its event loop is mostly idle.`,
    ],
  },
  {
    title: "Peak RSS",
    keys: ["rssMb"],
    why: [
      `workpool keeps a full row and a few promises per running attempt, and the buffers of its`,
      `batched commits; pg-boss holds one batch at a time, plainjob one job per worker.`,
    ],
  },
  {
    title: "Idle latency",
    keys: ["latP50", "latP95", "latP99"],
    why: [
      `BullMQ's enqueue is one in-memory Redis call that wakes a blocked worker. workpool SQLite's`,
      `enqueue commits with an fsync and wakes the worker in-process, which claims in a second`,
      `commit. workpool PostgreSQL, enqueued in the worker's own process as here, claims the new`,
      `work in the enqueue's own commit.`,
    ],
  },
  {
    title: "Large backlog drain",
    keys: ["backlogStart", "backlogEnd"],
    why: [
      `workpool PostgreSQL drains slower in the first seconds than at the end: the first touch of a`,
      `freshly written table costs more WAL per job; after it, a drain of 600,000 showed no`,
      `downward trend ([notes/postgres-drain.md](notes/postgres-drain.md#the-large-backlog)).`,
      `BullMQ keeps the backlog in memory; plainjob commits without an fsync.`,
    ],
  },
  {
    title: "Four-step workflow",
    keys: ["wfStepRate", "wfStepCpu"],
    why: [
      `Each workflow step is two works of the pool (the step, and the advance that replays or resumes the`,
      `function), and the advance reads the run and its journal, then writes the journal, the run's`,
      `generation and the next step in a transaction of its own, so advances are not group-committed the way`,
      `plain results are: about 17 queries per step on PostgreSQL where plain work needs about 2. A DBOS`,
      `step is one checkpoint insert by the process running the workflow, with no queue between steps.`,
      `Counts and profiles: [notes/workflows.md](notes/workflows.md).`,
    ],
  },
];

/** One line per metric in `keys` and system of ours that lost to a peer in this run: "workpool SQLite: 0.14× plainjob, 0.72× BullMQ". */
function lossLines(run, keys) {
  const ours = run.systems.filter((s) => s.ours && !s.skipped);
  const peers = run.systems.filter((s) => !s.ours && !s.skipped && !s.id.startsWith("workpool"));
  const metrics = run.metrics.filter((m) => keys.includes(m.key));
  const lines = [];
  for (const m of metrics) {
    for (const o of ours) {
      const lost = peers
        .map((p) => ({ p, x: ratio(run.results[m.key]?.[o.id], run.results[m.key]?.[p.id], m.better) }))
        .filter(({ x }) => x && !x.win)
        .map(({ p, x }) => `${fmtRatio(x).replace(/ [✓✗]$/, "")} ${p.label}`);
      if (lost.length) lines.push(`- ${metrics.length > 1 ? `${m.short}, ` : ""}${o.label}: ${lost.join(", ")}`);
    }
  }
  return lines;
}

/** The "why the losses" section: each explained metric workpool lost in this run, then any loss without an explanation. */
export function lossesMd(run) {
  const sections = [];
  for (const g of WHY_LOSSES) {
    const lines = lossLines(run, g.keys);
    if (lines.length) sections.push(`### ${g.title}\n\n${lines.join("\n")}\n\n${g.why.join("\n")}`);
  }
  const explained = new Set(WHY_LOSSES.flatMap((g) => g.keys));
  const rest = lossLines(
    run,
    run.metrics.filter((m) => !explained.has(m.key)).map((m) => m.key),
  );
  if (rest.length) sections.push(`### Not explained yet\n\n${rest.join("\n")}\n\nAdd an explanation to \`WHY_LOSSES\` in lib/report.mjs.`);
  return `## Why the losses

Ratios are ours / peer, as in the tables above. Durability first: workpool SQLite defaults
to \`synchronous=FULL\`, an fsync per commit (the physical reference above); plainjob runs
\`synchronous=NORMAL\` and BullMQ acknowledges from Redis memory, so neither waits for a
flush. The workpool SQLite NORMAL column shows workpool without it. Measurements behind
these explanations: [notes/](notes/README.md).

${sections.length ? sections.join("\n\n") : "workpool lost no comparison in this run."}
`;
}

export function resultsMd(run) {
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
  return `# Benchmark results

Generated by \`npm run bench${run.mode === "quick" ? " -- --quick" : ""}\` (${run.mode} mode) on ${run.startedAt.slice(0, 10)}; the run took ${Math.round(run.durationS / 60)} min.
Raw data: [results/full.json](results/full.json) (earlier runs: its history in git). Method and how to
re-run: [README.md](README.md). Experiments and measurements beyond these tables: [notes/](notes/README.md).

Each cell is the median of ${run.reps} interleaved repetition${run.reps > 1 ? "s" : ""} with the min–max in brackets
(the large backlog runs once per system). ↑/“higher is better” marks throughputs, “lower is better” latencies and memory.
† = the run hit its time cap (${mode.enqueueOneCapS} s for enqueue one at a time, ${mode.enqueueBatchCapS} s for enqueue in batches, ${mode.drainCapS} s for a drain,
${mode.backlogCapS} s for the large-backlog drain) and the rate is measured over the time it ran; the caps keep the whole run
within its time budget. Every system runs the same no-op handler in one worker process on the same machine and database
server.

## Results

${resultsTableMd(run)}

${
  cappedLines(run).length
    ? "Runs that hit their time cap:\n\n" +
      cappedLines(run)
        .map((l) => `- ${l}`)
        .join("\n") +
      "\n"
    : ""
}
${serverCostMd(run)}${serverCostMd(run) ? "\n" : ""}## Ratios (ours / peer)

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

How each workload is measured: [README.md](README.md#what-is-measured).

## Each system's configuration

${sys}
${skipped.length ? "\nSkipped on this run: " + skipped.map((s) => `${s.label} (${s.skipped})`).join("; ") + ".\n" : ""}
${lossesMd(run)}`;
}
