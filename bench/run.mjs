#!/usr/bin/env node
// The benchmark runner. See README.md in this folder.
//
//   node run.mjs [--quick] [--store=sqlite,postgres,redis] [--systems=id,…] [--workloads=id,…] [--reps=N]
//                [--jobs=N] [--drain-cap=S]
//
// Systems run in turn, interleaved across repetitions (A B C … A B C); every step runs
// in a fresh child process. Prints one table, writes results/latest.json and, for a
// complete full run, RESULTS.md.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { MODES } from "./lib/env.mjs";
import { ensureDatabase } from "./lib/pg.mjs";
import { describeMachine } from "./lib/machine.mjs";
import { commitRate } from "./lib/commit-rate.mjs";
import { aggregate, fmt, ratioData, resultsMd, textTable } from "./lib/report.mjs";
import { serverCostText } from "./lib/report-server-cost.mjs";
import { runChild } from "./lib/spawn.mjs";
import { SYSTEMS } from "./systems/index.mjs";
import enqueueOne from "./workloads/enqueue-one.mjs";
import enqueueBatch from "./workloads/enqueue-batch.mjs";
import drains from "./workloads/drain.mjs";
import latency from "./workloads/latency.mjs";
import largeBacklog from "./workloads/large-backlog.mjs";
import drainKeys from "./workloads/drain-keys.mjs";
import cpuFloor from "./workloads/cpu-floor.mjs";
import wfSteps from "./workloads/wf-steps.mjs";
import wfSleepers from "./workloads/wf-sleepers.mjs";
import wfReplay from "./workloads/wf-replay.mjs";

const WORKLOADS = [enqueueOne, enqueueBatch, ...drains, drainKeys, latency, largeBacklog, cpuFloor, wfSteps, wfSleepers, wfReplay];
const HERE = fileURLToPath(new URL(".", import.meta.url));
const ROOT = join(HERE, "..");

/**
 * Copies the built library into the run's temp folder so that every step of the run
 * measures the same build, even if ../dist is rebuilt while the bench runs.
 */
function snapshotLibrary(dir) {
  if (!existsSync(join(ROOT, "dist", "index.js"))) return null;
  const snap = join(dir, "workpool");
  mkdirSync(snap);
  cpSync(join(ROOT, "dist"), join(snap, "dist"), { recursive: true });
  cpSync(join(ROOT, "package.json"), join(snap, "package.json"));
  symlinkSync(join(ROOT, "node_modules"), join(snap, "node_modules"), "dir");
  return pathToFileURL(join(snap, "dist") + "/").href;
}

function parseArgs(argv) {
  const args = { quick: false, store: null, systems: null, workloads: null, reps: null, jobs: null, drainCapS: null, render: false };
  for (const a of argv) {
    const [k, v] = a.replace(/^--/, "").split("=");
    if (k === "quick") args.quick = true;
    else if (k === "store") args.store = v.split(",");
    else if (k === "systems") args.systems = v.split(",");
    else if (k === "workloads") args.workloads = v.split(",");
    else if (k === "reps") args.reps = Number(v);
    else if (k === "jobs") args.jobs = positive(k, v);
    else if (k === "drain-cap") args.drainCapS = positive(k, v);
    else if (k === "render") args.render = true;
    else if (k === "help" || k === "h") {
      console.log("usage: node run.mjs [--quick] [--store=sqlite,postgres,redis] [--systems=id,…] [--workloads=id,…] [--reps=N]");
      console.log("                    [--jobs=N] (backlog of the drain workloads) [--drain-cap=S] (their time cap, seconds)");
      console.log("       node run.mjs --render   (rewrites RESULTS.md from results/full.json, measuring nothing)");
      console.log(`systems: ${SYSTEMS.map((s) => s.id).join(", ")}`);
      console.log(`workloads: ${WORKLOADS.map((w) => w.id).join(", ")}`);
      process.exit(0);
    } else throw new Error(`unknown argument ${a} (try --help)`);
  }
  return args;
}

/** A positive integer argument, or a clear error naming it. */
function positive(name, v) {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${v}`);
  return n;
}

const log = (s) => process.stderr.write(`${s}\n`);

/**
 * Whether `system` takes part in workload `wl`: not skipped by the system, and within the
 * workload's reach (a workload without appliesTo is a queue workload: it needs `open`).
 */
const runs = (wl, system) => !system.skip.includes(wl.id) && (wl.appliesTo ? wl.appliesTo(system) : typeof system.open === "function");

/**
 * Runs a measurement, again after a pause if it fails (at most 3 tries): a shared
 * database server may restart under a benchmark. A measurement always starts with a reset.
 */
async function withRetry(fn, what) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (attempt >= 3) throw e;
      log(`  ${what} failed (${e.message.split("\n").slice(0, 2).join(" ")}); trying again in 5 s`);
      await new Promise((r) => setTimeout(r, 5000));
    }
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.render) {
    const run = JSON.parse(readFileSync(join(HERE, "results", "full.json"), "utf8"));
    const path = join(HERE, "RESULTS.md");
    writeFileSync(path, resultsMd(run, path));
    console.log(textTable(run));
    log("rewrote RESULTS.md from results/full.json");
    return;
  }
  const modeName = args.quick ? "quick" : "full";
  const mode = {
    ...MODES[modeName],
    ...(args.reps ? { reps: args.reps } : {}),
    ...(args.jobs ? { drain: args.jobs } : {}),
    ...(args.drainCapS ? { drainCapS: args.drainCapS } : {}),
  };
  const t0 = performance.now();
  const startedAt = new Date().toISOString();

  let systems = SYSTEMS.filter(
    (s) => (!args.store || args.store.includes(s.store)) && (args.systems ? args.systems.includes(s.id) : !mode.skipSystems.includes(s.id)),
  );
  const workloads = WORKLOADS.filter((w) => !args.workloads || args.workloads.includes(w.id));
  if (!systems.length || !workloads.length) throw new Error("nothing to run: check --store, --systems and --workloads");

  const dir = mkdtempSync(join(tmpdir(), "workpool-bench-"));
  const ctx = { dir };
  try {
    const dist = snapshotLibrary(dir);
    if (dist) ctx.dist = dist;
    const needPostgres = systems.some((s) => s.store === "postgres");
    if (needPostgres) await ensureDatabase();
    const sysInfo = [];
    for (const s of systems) {
      const skipped = await s.available(ctx);
      if (skipped) log(`note: skipping ${s.label}: ${skipped}`);
      sysInfo.push({
        id: s.id,
        label: s.label,
        store: s.store,
        ours: s.ours,
        packageName: s.packageName,
        version: skipped ? null : s.version(),
        durability: s.durability,
        config: s.config,
        skipped,
      });
    }
    systems = systems.filter((s) => !sysInfo.find((x) => x.id === s.id).skipped);

    const machine = await describeMachine({ needPostgres, needRedis: systems.some((s) => s.store === "redis") });
    log(
      `workpool bench, ${modeName} mode: ${systems.map((s) => s.label).join(", ")}; ${mode.reps} repetition(s); load average ${machine.loadAvgAtStart.join(" ")}`,
    );

    // The physical reference first, on a quiet server.
    log("raw durable commit rates…");
    const commitRates = {};
    const stores = new Set(systems.map((s) => s.store));
    if (stores.has("sqlite")) {
      commitRates.sqliteFull = await commitRate("sqliteFull", dir, mode.commitRateS);
      commitRates.sqliteNormal = await commitRate("sqliteNormal", dir, mode.commitRateS);
    }
    if (stores.has("postgres")) commitRates.postgres = await commitRate("postgres", dir, mode.commitRateS);
    if (stores.has("redis")) commitRates.redis = await commitRate("redis", dir, mode.commitRateS);
    log(
      `  ${Object.entries(commitRates)
        .map(([k, v]) => `${k} ${fmt(v, "jobs/s")}/s`)
        .join(", ")}`,
    );

    const raw = {}; // metric -> system -> values
    const cappedBy = {}; // metric -> system -> notes
    const details = [];
    const record = (wl, s, rep, out) => {
      for (const [k, v] of Object.entries(out.values)) {
        ((raw[k] ??= {})[s.id] ??= []).push(v);
        (cappedBy[k] ??= {})[s.id] ??= [];
        if (out.capped?.[k]) cappedBy[k][s.id].push(out.capped[k]);
      }
      details.push({ workload: wl.id, system: s.id, rep, values: out.values, capped: out.capped ?? {}, detail: out.detail });
    };
    const step = async (wl, s, rep) => {
      const child = (op, params) => runChild(s.id, op, params, ctx);
      const ts = performance.now();
      try {
        const out = await withRetry(() => wl.measure({ system: s, mode, ctx, child, rep }), `${s.label} ${wl.id}`);
        record(wl, s, rep, out);
        const shown = wl.metrics
          .map((m) => `${m.short} ${fmt(out.values[m.key], m.unit)} ${m.unit}${out.capped?.[m.key] ? " (capped)" : ""}`)
          .join("; ");
        log(
          `  [${rep === null ? "once" : `rep ${rep + 1}/${mode.reps}`}] ${s.label}: ${shown}  (${((performance.now() - ts) / 1000).toFixed(1)} s, total ${Math.round((performance.now() - t0) / 1000)} s)`,
        );
      } catch (e) {
        log(`  ${s.label} ${wl.id} FAILED: ${e.message}`);
        details.push({ workload: wl.id, system: s.id, rep, error: e.message });
      }
    };

    for (let rep = 0; rep < mode.reps; rep++) {
      for (const wl of workloads.filter((w) => w.perRep)) {
        log(`${wl.id} (rep ${rep + 1}/${mode.reps})`);
        for (const s of systems) if (runs(wl, s)) await step(wl, s, rep);
      }
    }
    for (const wl of workloads.filter((w) => !w.perRep)) {
      log(`${wl.id} (once per system)`);
      for (const s of systems) if (runs(wl, s)) await step(wl, s, null);
    }
    for (const s of systems) await s.reset(ctx); // leave no state behind

    const metrics = [];
    for (const wl of workloads)
      for (const m of wl.metrics)
        metrics.push({ key: m.key, short: m.short, labelText: m.label(mode), unit: m.unit, better: m.better, workload: wl.id });
    const results = {};
    for (const m of metrics) {
      results[m.key] = {};
      for (const [sid, values] of Object.entries(raw[m.key] ?? {})) {
        const capped = cappedBy[m.key]?.[sid] ?? [];
        results[m.key][sid] = aggregate(values, capped);
      }
    }
    const run = {
      mode: modeName,
      modeConfig: mode,
      reps: mode.reps,
      startedAt,
      durationS: (performance.now() - t0) / 1000,
      machine,
      commitRates,
      systems: sysInfo,
      metrics,
      results,
      details,
    };
    run.ratios = ratioData(run);

    console.log(`\nworkpool bench (${modeName}): median (min–max) of ${mode.reps} repetition(s); † = hit the time cap`);
    console.log(textTable(run));
    const costs = serverCostText(run);
    if (costs) console.log(`\n${costs}`);
    console.log(
      `\nraw durable commit rate: ${Object.entries(commitRates)
        .map(([k, v]) => `${k} ${fmt(v, "jobs/s")}/s`)
        .join(", ")}`,
    );

    mkdirSync(join(HERE, "results"), { recursive: true });
    const json = JSON.stringify(run, null, 2) + "\n";
    writeFileSync(join(HERE, "results", "latest.json"), json);
    const complete = modeName === "full" && !args.store && !args.systems && !args.workloads && !args.reps && !args.jobs && !args.drainCapS;
    if (complete) {
      // RESULTS.md and its raw data (full.json) change only with a complete full run.
      writeFileSync(join(HERE, "results", "full.json"), json);
      const path = join(HERE, "RESULTS.md");
      writeFileSync(path, resultsMd(run, path));
      log(`wrote results/latest.json, results/full.json and RESULTS.md (${Math.round(run.durationS)} s)`);
    } else {
      log(
        `wrote results/latest.json (${Math.round(run.durationS)} s); RESULTS.md and results/full.json are only rewritten by a complete full run`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
