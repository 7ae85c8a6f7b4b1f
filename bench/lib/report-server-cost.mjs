// The server cost of each drain by phase (fill, drain, cleanup, vacuum), from the runs'
// details (lib/life-cost.mjs): a table for the terminal and one for RESULTS.md. Runs
// from before the server cost was measured have none, and show no table.
import { fmt, median } from "./report.mjs";

const PHASES = ["fill", "drain", "cleanup", "vacuum", "total"];
const WORKLOADS = ["drain-10", "drain-100", "drain-keys"];

/** Rows [system label, workload, "cpu / wal" per phase] of the medians over the repetitions. */
export function serverCostRows(run) {
  const rows = [];
  for (const s of run.systems.filter((x) => !x.skipped)) {
    for (const wl of WORKLOADS) {
      const costs = run.details
        .filter((d) => d.system === s.id && d.workload === wl && d.detail?.serverCost)
        .map((d) => d.detail.serverCost);
      if (!costs.length) continue;
      const cellOf = (phase) => {
        const cpu = costs.map((c) => c.perJob[phase].cpuUs).filter((v) => v !== null);
        const wal = costs.map((c) => c.perJob[phase].walBytes);
        return `${cpu.length ? fmt(median(cpu), "µs") : "n/a"} µs, ${fmt(median(wal), "B")} B`;
      };
      rows.push([s.label, wl, ...PHASES.map(cellOf)]);
    }
  }
  return rows;
}

const HEAD = ["system", "workload", ...PHASES];

/** The terminal table, or "" when no run measured the server cost. */
export function serverCostText(run) {
  const rows = serverCostRows(run);
  if (!rows.length) return "";
  const widths = HEAD.map((h, i) => Math.max(h.length, ...rows.map((r) => [...r[i]].length)));
  const line = (r) => r.map((c, i) => (i > 1 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ");
  return [
    "server CPU and WAL per job, by phase of its life (median of the repetitions):",
    line(HEAD),
    widths.map((w) => "─".repeat(w)).join("  "),
    ...rows.map(line),
  ].join("\n");
}

/** The RESULTS.md section, or "" when no run measured the server cost. */
export function serverCostMd(run) {
  const rows = serverCostRows(run);
  if (!rows.length) return "";
  return `## What each job costs the PostgreSQL server

Server CPU (µs) and WAL (bytes) per job in each phase of its life: **fill** (the backlog's
enqueue in batches of 10,000), **drain** (claims and results), **cleanup** (the system's own
deletion of finished jobs: workpool's retention, pg-boss's archive and delete; graphile-worker
deletes on completion), **vacuum** (one VACUUM of the system's tables). CPU counts the bench
database's backends and the server's background processes; WAL the bench database's records.
Method: [lib/server-cost.mjs](lib/server-cost.mjs), [notes/server-cost.md](notes/server-cost.md).

| ${HEAD.join(" | ")} |
|---|---|${PHASES.map(() => "---:").join("|")}|
${rows.map((r) => `| ${r.join(" | ")} |`).join("\n")}
`;
}
