// The email demo: an app sends N simulated emails through a flaky fake provider with a
// durable work pool. Run it with `npm run demo` (or `npm run demo -- --emails 200`).
//
// What it shows:
// - transactional enqueue: the app's `emails` rows and the work that sends them are
//   written in one transaction, so an email exists iff its send is queued;
// - a global parallelism limit (20 sends at once), retries with exponential backoff for
//   transient errors, and `NonRetryableError` for permanent ones;
// - an onComplete handler that records each delivery in the app's own `deliveries` table,
//   in the same transaction that marks the work finished: exactly one row per email;
// - the pool's events (`pool.on("completed", ...)`) driving a live progress bar.
//
// The provider is fake (no network): each send takes a few ms, about 10 % of attempts
// fail with a transient error, and 1 % of the addresses bounce for good.
//
// It runs on SQLite in `demo.db` (recreated on every run). With DATABASE_URL set, it runs
// on that PostgreSQL database instead, in its own schema `workpool_email_demo`
// (recreated on every run).
import { fork } from "node:child_process";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import cliProgress from "cli-progress";
import Table from "cli-table3";
import { createPool, makeEmails, makeStore, MAX_PARALLELISM } from "./app.js";

/** Stop with an error if nothing finishes for this long. */
const STALL_LIMIT_MS = 60_000;

/** @typedef {import("./app.js").Email} Email */

// ---------------------------------------------------------------------------------------
// Command line

// ---------------------------------------------------------------------------------------
// Command line

/** @returns {{ emails: number, workers: number }} */
function parseCommandLine() {
  const usage =
    "usage: node examples/email-demo/main.js [--emails N] [--workers W]\n" +
    "  --emails N   emails to send, 1 to 1000000 (default 2000)\n" +
    "  --workers W  worker processes, 0 to 16 (default 0: the worker runs in this process)";
  let values;
  try {
    ({ values } = parseArgs({
      options: { emails: { type: "string" }, workers: { type: "string" }, help: { type: "boolean", short: "h" } },
    }));
  } catch (e) {
    console.error(`${e instanceof Error ? e.message : String(e)}\n${usage}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const emails = values.emails === undefined ? 2000 : Number(values.emails);
  if (!Number.isInteger(emails) || emails < 1 || emails > 1_000_000) {
    console.error(`--emails must be an integer from 1 to 1000000, got ${values.emails}\n${usage}`);
    process.exit(2);
  }
  const workers = values.workers === undefined ? 0 : Number(values.workers);
  if (!Number.isInteger(workers) || workers < 0 || workers > 16) {
    console.error(`--workers must be an integer from 0 to 16, got ${values.workers}\n${usage}`);
    process.exit(2);
  }
  return { emails, workers };
}

// Progress

/** Counts kept from the pool's events. */
class Progress {
  /** @param {number} total */
  constructor(total) {
    this.total = total;
    this.sent = 0;
    this.failed = 0;
    this.canceled = 0;
    /** Emails waiting out a backoff before their next attempt. */
    this.retrying = 0;
    /** Attempts started and not yet ended. */
    this.running = 0;
    /** Attempts that failed and were scheduled again. */
    this.retries = 0;
    /** Attempts made by finished emails. */
    this.attempts = 0;
    /** Enqueue-to-finish latency of each finished email, ms. */
    this.latencies = /** @type {number[]} */ ([]);
    this.lastChangeAt = performance.now();
    /** (time, done) samples for the current rate. */
    this.samples = /** @type {[number, number][]} */ ([[performance.now(), 0]]);
  }

  get done() {
    return this.sent + this.failed + this.canceled;
  }

  /** @param {import("workpool").StartedEvent} e */
  onStarted(e) {
    this.running++;
    if (e.attempt > 1) this.retrying--;
  }

  /** @param {import("workpool").CompletedEvent} e */
  onCompleted(e) {
    this.lastChangeAt = performance.now();
    this.running--;
    if (e.status === "retrying") {
      this.retries++;
      this.retrying++;
      return;
    }
    if (e.status === "success") this.sent++;
    else if (e.status === "failed") this.failed++;
    else this.canceled++;
    this.attempts += e.attempts;
    this.latencies.push(e.lagSinceEnqueuedMs);
  }

  /** Emails finished per second over about the last second. */
  rate() {
    const now = performance.now();
    this.samples.push([now, this.done]);
    while (this.samples.length > 2 && now - this.samples[1][0] >= 1000) this.samples.shift();
    const [t0, d0] = this.samples[0];
    return now > t0 ? ((this.done - d0) * 1000) / (now - t0) : 0;
  }
}

/**
 * A live bar on a terminal; a plain line about once a second otherwise (CI logs).
 *
 * @param {Progress} progress
 * @returns {() => void}  stops the display
 */
function showProgress(progress) {
  const started = performance.now();
  if (process.stdout.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream: process.stdout,
        format: " {bar} {value}/{total} done | {failed} failed | {retrying} retrying | {running} running | {rate}/s",
        hideCursor: true,
        barsize: 20,
      },
      cliProgress.Presets.shades_classic,
    );
    const payload = () => ({
      failed: progress.failed,
      retrying: progress.retrying,
      running: progress.running,
      rate: progress.rate().toFixed(0),
    });
    bar.start(progress.total, 0, payload());
    const timer = setInterval(() => bar.update(progress.done, payload()), 100);
    return () => {
      clearInterval(timer);
      bar.update(progress.done, payload());
      bar.stop();
    };
  }
  const line = () => {
    const seconds = ((performance.now() - started) / 1000).toFixed(1).padStart(5);
    console.log(
      `[${seconds}s] ${progress.done}/${progress.total} done | ${progress.failed} failed | ${progress.retrying} retrying | ${progress.running} running | ${progress.rate().toFixed(0)}/s`,
    );
  };
  const timer = setInterval(line, 1000);
  return () => {
    clearInterval(timer);
    line();
  };
}

/**
 * @param {number[]} sorted  ascending
 * @param {number} p  0..100
 */
function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** @param {number} ms */
function formatMs(ms) {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;
}

/** @param {number} n */
function formatInt(n) {
  return n.toLocaleString("en-US");
}

// ---------------------------------------------------------------------------------------
// The app

async function main() {
  const { emails: count, workers } = parseCommandLine();
  const app = await makeStore();
  await app.createTables();

  /** Log lines the pool writes while the bar is on screen; printed after it. */
  const logged = /** @type {string[]} */ ([]);
  const keep = (/** @type {unknown[]} */ ...args) => logged.push(args.map(String).join(" "));
  const { pool, send, recordDelivery } = createPool(app, { debug: keep, info: keep, warn: keep, error: keep });

  const progress = new Progress(count);
  /** @type {() => void} */
  let allDone = () => {};
  const finished = new Promise((resolve) => (allDone = () => resolve(undefined)));
  /** @param {import("workpool").StartedEvent | import("workpool").CompletedEvent} e */
  const onEvent = (e) => {
    if (e.event === "started") progress.onStarted(e);
    else progress.onCompleted(e);
    if (progress.done >= count) allDone();
  };

  const where = workers ? `${workers} worker processes` : "a worker in this process";
  console.log(`Sending ${formatInt(count)} emails on ${app.label} with ${where}, maxParallelism ${MAX_PARALLELISM}, retries on.\n`);
  /** @type {import("node:child_process").ChildProcess[]} */
  const children = [];
  if (workers === 0) {
    pool.on("started", onEvent);
    pool.on("completed", onEvent);
    await pool.start();
  } else {
    // Each worker process runs the same pool; the global limit holds across all of them.
    // They report their pool's events here, to drive the same progress display.
    const script = fileURLToPath(new URL("./worker.js", import.meta.url));
    for (let i = 0; i < workers; i++) {
      const child = fork(script, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
      child.on("message", (/** @type {any} */ m) => (m === "ready" ? undefined : onEvent(m)));
      children.push(child);
    }
    await Promise.all(children.map((c) => new Promise((resolve) => c.on("message", (m) => m === "ready" && resolve(undefined)))));
  }
  const t0 = performance.now();
  const emails = makeEmails(count);
  await app.enqueueAll(
    (email, tx) =>
      pool.enqueueAction(send, email, { onComplete: recordDelivery, context: { emailId: email.id }, name: `email-${email.id}`, tx }),
    emails,
  );

  const stopDisplay = showProgress(progress);
  const watchdog = setInterval(() => {
    if (performance.now() - progress.lastChangeAt > STALL_LIMIT_MS) {
      stopDisplay();
      console.error(`\nNo email finished in ${STALL_LIMIT_MS / 1000} s; giving up.`);
      process.exit(1);
    }
  }, 1000);
  const onSigint = () => {
    clearInterval(watchdog);
    stopDisplay();
    console.log("\nInterrupted: stopping the pool (unfinished emails stay queued in the database).");
    for (const c of children) c.kill("SIGTERM");
    pool.stop({ timeoutMs: 2000 }).finally(() => process.exit(130));
  };
  process.once("SIGINT", onSigint);

  await finished;
  const wallMs = performance.now() - t0;
  clearInterval(watchdog);
  stopDisplay();
  process.off("SIGINT", onSigint);
  await pool.stop();
  await Promise.all(
    children.map((c) => {
      const exited = new Promise((resolve) => c.on("exit", resolve));
      c.send("stop");
      return exited;
    }),
  );

  const check = await app.checkDeliveries();
  await app.close();

  const latencies = [...progress.latencies].sort((a, b) => a - b);
  const ok =
    check.emails === count &&
    check.rows === count &&
    check.distinctEmails === count &&
    check.missing === 0 &&
    check.sent === progress.sent &&
    check.failed === progress.failed;
  const color = process.stdout.isTTY;
  const table = new Table({
    head: ["", "result"],
    style: color ? { head: ["cyan"] } : { head: [], border: [] },
    colAligns: ["left", "right"],
  });
  table.push(
    ["store", app.label],
    ["workers", workers ? `${workers} processes` : "1 (in process)"],
    ["emails", formatInt(count)],
    ["sent", formatInt(progress.sent)],
    ["failed permanently", formatInt(progress.failed)],
    ["retries", formatInt(progress.retries)],
    ["attempts", `${formatInt(progress.attempts)} (${(progress.attempts / count).toFixed(2)} per email)`],
    ["wall time", formatMs(wallMs)],
    ["throughput", `${formatInt(Math.round((count * 1000) / wallMs))} emails/s`],
    ["enqueue-to-finish p50", formatMs(percentile(latencies, 50))],
    ["enqueue-to-finish p95", formatMs(percentile(latencies, 95))],
    ["deliveries table", `${formatInt(check.rows)} rows for ${formatInt(check.emails)} emails: ${ok ? "OK" : "MISMATCH"}`],
  );
  console.log(`\n${table.toString()}`);
  if (logged.length) console.log(`\nThe pool logged ${logged.length} error line(s):\n${logged.slice(0, 20).join("\n")}`);
  if (!ok) {
    console.error(
      `\nMISMATCH: expected exactly one delivery row per email; found ${check.rows} rows, ${check.distinctEmails} distinct emails, ` +
        `${check.missing} emails without a row; sent ${check.sent} vs ${progress.sent} events, failed ${check.failed} vs ${progress.failed} events.`,
    );
    process.exitCode = 1;
    return;
  }
  console.log("\nEvery email has exactly one row in `deliveries`, written in the same transaction that finished its work.");
  const db = process.env.DATABASE_URL ? "$DATABASE_URL --schema workpool_email_demo" : "demo.db";
  console.log(`Look inside: npx workpool --db ${db} stats  (then ls emails --state failed, show <id>)`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
