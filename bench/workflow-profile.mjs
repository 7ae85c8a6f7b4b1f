#!/usr/bin/env node
// Where the CPU of the four-step workflow workload goes: runs one side of wf-steps (the
// workflow, or the same steps as plain work) in this process with the V8 CPU profiler on
// for the measured region only (the drain, not the backlog before it), then prints the
// self time by file and by function, and writes the .cpuprofile (open it in Chrome DevTools).
// With --count (SQLite) it counts the statements run in that region instead, by SQL text,
// per step (the counting itself costs time, so the profile of such a run is skewed).
// Not part of the comparison; see notes/workflows.md.
//
//   node workflow-profile.mjs [--system=workpool-sqlite] [--side=workflow|plain] [--runs=2000] [--out=wf.cpuprofile] [--count]
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureDatabase } from "./lib/pg.mjs";
import { plainSide, workflowSide } from "./lib/workflows.mjs";
import { systemById } from "./systems/index.mjs";

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, "").split("=")));
const system = systemById(args.system ?? "workpool-sqlite");
const side = args.side ?? "workflow";
const n = Number(args.runs ?? 2000);
const out = args.out ?? `${system.id}-${side}.cpuprofile`;

/** Self time per key over the profile's samples, largest first, as "12.3%  key" lines. */
function selfTime(profile, keyOf, top) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const byKey = new Map();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const key = keyOf(nodes.get(id).callFrame);
    byKey.set(key, (byKey.get(key) ?? 0) + dt);
    total += dt;
  });
  return [...byKey]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, t]) => `${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`)
    .join("\n");
}

const shortUrl = (url) => url.replace(/^file:\/\/.*\/(dist|node_modules)\//, "$1/");

/**
 * Counts the statements better-sqlite3 runs while `counting.on` (the same copy of it the
 * store loads, resolved from ../dist), by SQL text; BEGIN and COMMIT included.
 */
function countStatements() {
  const counting = { on: false, bySql: new Map() };
  const Database = createRequire(new URL("../dist/index.js", import.meta.url))("better-sqlite3");
  const note = (sql) => {
    if (!counting.on) return;
    const key = sql.replace(/\s+/g, " ").trim().slice(0, 80);
    counting.bySql.set(key, (counting.bySql.get(key) ?? 0) + 1);
  };
  const exec = Database.prototype.exec;
  Database.prototype.exec = function (sql) {
    note(sql);
    return exec.call(this, sql);
  };
  const prepare = Database.prototype.prepare;
  let patched = false;
  Database.prototype.prepare = function (...a) {
    const stmt = prepare.apply(this, a);
    if (!patched) {
      patched = true;
      const proto = Object.getPrototypeOf(stmt);
      for (const m of ["run", "get", "all", "iterate"]) {
        const fn = proto[m];
        proto[m] = function (...x) {
          note(this.source);
          return fn.apply(this, x);
        };
      }
    }
    return stmt;
  };
  return counting;
}

const counting = "count" in args && system.store === "sqlite" ? countStatements() : null;
const session = new Session();
session.connect();
const profiler = {
  start: async () => {
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 100 });
    await session.post("Profiler.start");
    if (counting) counting.on = true;
  },
  stop: async () => {
    if (counting) counting.on = false;
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(out, JSON.stringify(profile));
    profiler.profile = profile;
  },
};

const dir = mkdtempSync(join(tmpdir(), "workpool-wf-profile-"));
try {
  if (system.store === "postgres") await ensureDatabase();
  const run = side === "plain" ? plainSide : workflowSide;
  const r = await run(system, { dir }, { n, concurrency: 100, capS: 120, profiler });
  await system.reset({ dir });
  console.log(`${system.label}, ${side}: ${r.steps} steps, ${Math.round(r.rate)} steps/s, ${Math.round(r.cpuUsPerStep)} µs CPU per step`);
  console.log(`\nself time by file (the profiler samples the main thread's wall time):\n`);
  console.log(selfTime(profiler.profile, (f) => shortUrl(f.url) || f.functionName, 20));
  console.log(`\nself time by function:\n`);
  console.log(selfTime(profiler.profile, (f) => `${f.functionName || "(anonymous)"} ${shortUrl(f.url)}:${f.lineNumber + 1}`, 30));
  if (counting) {
    const all = [...counting.bySql].sort((a, b) => b[1] - a[1]);
    const total = all.reduce((sum, [, c]) => sum + c, 0);
    const per = (c) => (c / r.steps).toFixed(2).padStart(6);
    console.log(`\nstatements per step (${total} in all, ${per(total)} per step), by SQL text:\n`);
    console.log(
      all
        .slice(0, 20)
        .map(([sql, c]) => `${per(c)}  ${sql}`)
        .join("\n"),
    );
  }
  console.log(`\nwrote ${out}`);
} finally {
  session.disconnect();
  rmSync(dir, { recursive: true, force: true });
}
