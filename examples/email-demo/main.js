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
import { rmSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import cliProgress from "cli-progress";
import Table from "cli-table3";
import { NonRetryableError, Workpool } from "workpool";

const DB_FILE = "demo.db";
const MAX_PARALLELISM = 20;
/** Share of send attempts that fail with a transient error (retried). */
const TRANSIENT_FAILURE_RATE = 0.1;
/** One address in this many bounces for good (NonRetryableError). */
const BOUNCE_EVERY = 100;
/** Stop with an error if nothing finishes for this long. */
const STALL_LIMIT_MS = 60_000;

/**
 * @typedef {{ id: number, to: string, subject: string }} Email
 * @typedef {{ messageId: string }} SendReceipt
 * @typedef {{ emailId: number }} DeliveryContext
 * @typedef {{ emailId: number, workId: string, status: "sent" | "failed" | "canceled", messageId: string | null, error: string | null }} Delivery
 * @typedef {{ rows: number, emails: number, distinctEmails: number, missing: number, sent: number, failed: number }} DeliveryCheck
 */

/**
 * The app's side of the database, for one kind of store. Only `makeStore()` knows which
 * database is behind it; everything else in the demo is the same for every store.
 *
 * @typedef {object} AppStore
 * @property {string} label  shown in the summary
 * @property {import("workpool").Store<any>} store  the workpool store
 * @property {() => Promise<void>} createTables  creates fresh `emails` and `deliveries` tables
 * @property {(enqueue: (email: Email, tx: any) => Promise<string>, emails: Email[]) => Promise<string[]>} enqueueAll
 *   inserts the emails and enqueues their sends in one transaction
 * @property {(tx: any, delivery: Delivery) => void | Promise<void>} recordDelivery
 *   writes one delivery with the onComplete transaction handle
 * @property {() => Promise<DeliveryCheck>} checkDeliveries  counts what onComplete wrote
 * @property {() => Promise<void>} close  closes the app's connection and the store
 */

// ---------------------------------------------------------------------------------------
// Command line

/** @returns {{ emails: number }} */
function parseCommandLine() {
  const usage = "usage: node examples/email-demo/main.js [--emails N]   (N: 1 to 1000000, default 2000)";
  let values;
  try {
    ({ values } = parseArgs({ options: { emails: { type: "string" }, help: { type: "boolean", short: "h" } } }));
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
  return { emails };
}

// ---------------------------------------------------------------------------------------
// Stores

/**
 * The store the demo runs on: SQLite in `demo.db` (fresh each run), or PostgreSQL when
 * `DATABASE_URL` is set and this build has the PostgreSQL store.
 *
 * @returns {Promise<AppStore>}
 */
async function makeStore() {
  const url = process.env.DATABASE_URL;
  if (url) {
    const postgres = await import("workpool/postgres").catch(() => null);
    if (postgres) return postgresAppStore(postgres, url);
    console.log("DATABASE_URL is set, but this build has no PostgreSQL store; running on SQLite.\n");
  }
  return sqliteAppStore(DB_FILE);
}

/**
 * SQLite: the store opens `file` (WAL); the app has its own connection to the same file
 * for its transactions, as a real app would. onComplete handlers write synchronously
 * with `ctx.tx`, the store's connection inside its transaction.
 *
 * @param {string} file
 * @returns {Promise<AppStore>}
 */
async function sqliteAppStore(file) {
  const [{ default: Database }, { sqliteStore }] = await Promise.all([import("better-sqlite3"), import("workpool/sqlite")]);
  for (const suffix of ["", "-wal", "-shm"]) rmSync(file + suffix, { force: true });
  const store = sqliteStore({ filename: file });
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  /** @type {Map<unknown, import("better-sqlite3").Statement>} */
  const inserts = new Map();
  return {
    label: `SQLite (${file}, WAL)`,
    store,
    async createTables() {
      db.exec(`
        CREATE TABLE emails (
          id INTEGER PRIMARY KEY, recipient TEXT NOT NULL, subject TEXT NOT NULL,
          status TEXT NOT NULL DEFAULT 'queued', work_id TEXT);
        -- No unique constraint on purpose: a second delivery of one email would show up
        -- as a second row, and the check at the end would catch it.
        CREATE TABLE deliveries (
          email_id INTEGER NOT NULL, work_id TEXT NOT NULL, status TEXT NOT NULL,
          message_id TEXT, error TEXT, recorded_at INTEGER NOT NULL);
        CREATE INDEX deliveries_email ON deliveries (email_id);`);
    },
    async enqueueAll(enqueue, emails) {
      const insert = db.prepare("INSERT INTO emails (id, recipient, subject) VALUES (?, ?, ?)");
      /** @type {Promise<string>[]} */
      const ids = [];
      // One synchronous transaction: on SQLite, enqueue with { tx } writes before it
      // returns, so the work commits (or rolls back) with the app's rows.
      db.transaction(() => {
        for (const email of emails) {
          insert.run(email.id, email.to, email.subject);
          ids.push(enqueue(email, db));
        }
      })();
      return Promise.all(ids);
    },
    recordDelivery(tx, d) {
      // Synchronous on purpose: SQLite's connection is held while a handler runs.
      let stmts = inserts.get(tx);
      if (!stmts) {
        stmts = tx.prepare(`INSERT INTO deliveries (email_id, work_id, status, message_id, error, recorded_at) VALUES (?, ?, ?, ?, ?, ?)`);
        inserts.set(tx, stmts);
      }
      stmts.run(d.emailId, d.workId, d.status, d.messageId, d.error, Date.now());
      tx.prepare("UPDATE emails SET status = ?, work_id = ? WHERE id = ?").run(d.status, d.workId, d.emailId);
    },
    async checkDeliveries() {
      const row = db
        .prepare(
          `SELECT
             (SELECT count(*) FROM deliveries) AS rows,
             (SELECT count(*) FROM emails) AS emails,
             (SELECT count(DISTINCT email_id) FROM deliveries) AS distinctEmails,
             (SELECT count(*) FROM emails e WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.email_id = e.id)) AS missing,
             (SELECT count(*) FROM deliveries WHERE status = 'sent') AS sent,
             (SELECT count(*) FROM deliveries WHERE status = 'failed') AS failed`,
        )
        .get();
      return /** @type {DeliveryCheck} */ (row);
    },
    async close() {
      db.close();
      await store.close();
    },
  };
}

/**
 * PostgreSQL: the app's tables live in the demo's own schema, dropped at the start of
 * each run; onComplete writes with `ctx.tx`, a pg client inside the transaction.
 *
 * @param {any} postgres  the `workpool/postgres` module
 * @param {string} url
 * @returns {Promise<AppStore>}
 */
async function postgresAppStore(postgres, url) {
  const { default: pg } = await import("pg");
  const schema = "workpool_email_demo";
  const app = new pg.Pool({ connectionString: url, max: 2 });
  await app.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  const store = postgres.postgresStore({ connectionString: url, schema });
  return {
    label: `PostgreSQL (schema ${schema})`,
    store,
    async createTables() {
      await app.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await app.query(`
        CREATE TABLE ${schema}.emails (
          id INTEGER PRIMARY KEY, recipient TEXT NOT NULL, subject TEXT NOT NULL,
          status TEXT NOT NULL DEFAULT 'queued', work_id TEXT);
        CREATE TABLE ${schema}.deliveries (
          email_id INTEGER NOT NULL, work_id TEXT NOT NULL, status TEXT NOT NULL,
          message_id TEXT, error TEXT, recorded_at BIGINT NOT NULL);`);
    },
    async enqueueAll(enqueue, emails) {
      const client = await app.connect();
      try {
        await client.query("BEGIN");
        const ids = [];
        for (const email of emails) {
          await client.query(`INSERT INTO ${schema}.emails (id, recipient, subject) VALUES ($1, $2, $3)`, [email.id, email.to, email.subject]);
          ids.push(await enqueue(email, client));
        }
        await client.query("COMMIT");
        return ids;
      } catch (e) {
        await client.query("ROLLBACK");
        throw e;
      } finally {
        client.release();
      }
    },
    async recordDelivery(tx, d) {
      await tx.query(
        `INSERT INTO ${schema}.deliveries (email_id, work_id, status, message_id, error, recorded_at) VALUES ($1, $2, $3, $4, $5, $6)`,
        [d.emailId, d.workId, d.status, d.messageId, d.error, Date.now()],
      );
      await tx.query(`UPDATE ${schema}.emails SET status = $1, work_id = $2 WHERE id = $3`, [d.status, d.workId, d.emailId]);
    },
    async checkDeliveries() {
      const { rows } = await app.query(`SELECT
          (SELECT count(*) FROM ${schema}.deliveries)::int AS rows,
          (SELECT count(*) FROM ${schema}.emails)::int AS emails,
          (SELECT count(DISTINCT email_id) FROM ${schema}.deliveries)::int AS "distinctEmails",
          (SELECT count(*) FROM ${schema}.emails e WHERE NOT EXISTS (SELECT 1 FROM ${schema}.deliveries d WHERE d.email_id = e.id))::int AS missing,
          (SELECT count(*) FROM ${schema}.deliveries WHERE status = 'sent')::int AS sent,
          (SELECT count(*) FROM ${schema}.deliveries WHERE status = 'failed')::int AS failed`);
      return rows[0];
    },
    async close() {
      await store.close();
      await app.end();
    },
  };
}

// ---------------------------------------------------------------------------------------
// The fake email provider

/**
 * Waits `ms`, or rejects with the signal's reason when it is aborted (cancel, timeout).
 *
 * @param {number} ms
 * @param {AbortSignal} signal
 * @returns {Promise<void>}
 */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Sends one email through a flaky provider: a few ms per call, ~10 % transient errors
 * (the pool retries them), permanent bounces for invalid addresses (not retried).
 *
 * @param {Email} email
 * @param {AbortSignal} signal
 * @returns {Promise<SendReceipt>}
 */
async function providerSend(email, signal) {
  await sleep(2 + Math.floor(Math.random() * 7), signal);
  if (email.to.endsWith("@invalid.example")) {
    throw new NonRetryableError(`550 5.1.1 <${email.to}>: mailbox does not exist`);
  }
  if (Math.random() < TRANSIENT_FAILURE_RATE) {
    throw new Error("421 4.7.0 try again later (rate limited)");
  }
  return { messageId: `<${email.id}.${Math.random().toString(36).slice(2, 10)}@mail.example>` };
}

/**
 * @param {number} count
 * @returns {Email[]}
 */
function makeEmails(count) {
  return Array.from({ length: count }, (_, id) => ({
    id,
    to: id % BOUNCE_EVERY === BOUNCE_EVERY - 1 ? `nobody-${id}@invalid.example` : `user-${id}@example.com`,
    subject: `Your weekly digest #${id}`,
  }));
}

// ---------------------------------------------------------------------------------------
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
    const payload = () => ({ failed: progress.failed, retrying: progress.retrying, running: progress.running, rate: progress.rate().toFixed(0) });
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
  const { emails: count } = parseCommandLine();
  const app = await makeStore();
  await app.createTables();

  /** Log lines the pool writes while the bar is on screen; printed after it. */
  const logged = /** @type {string[]} */ ([]);
  const keep = (/** @type {unknown[]} */ ...args) => logged.push(args.map(String).join(" "));
  const pool = new Workpool(app.store, {
    name: "emails",
    maxParallelism: MAX_PARALLELISM,
    retryActionsByDefault: true,
    defaultRetryBehavior: { maxAttempts: 5, initialBackoffMs: 50, base: 2 },
    logLevel: "ERROR",
    logger: { debug: keep, info: keep, warn: keep, error: keep },
  });

  const send = pool.defineAction("sendEmail", (ctx, /** @type {Email} */ email) => providerSend(email, ctx.signal));

  const recordDelivery = pool.defineOnComplete("recordDelivery", (ctx, { workId, context, result }) =>
    app.recordDelivery(ctx.tx, {
      emailId: /** @type {DeliveryContext} */ (context).emailId,
      workId,
      status: result.kind === "success" ? "sent" : result.kind,
      messageId: result.kind === "success" ? /** @type {SendReceipt} */ (result.returnValue).messageId : null,
      error: result.kind === "failed" ? result.error : null,
    }),
  );

  const progress = new Progress(count);
  pool.on("started", (e) => progress.onStarted(e));
  pool.on("completed", (e) => progress.onCompleted(e));
  /** @type {() => void} */
  let allDone = () => {};
  const finished = new Promise((resolve) => (allDone = () => resolve(undefined)));
  pool.on("completed", () => {
    if (progress.done >= count) allDone();
  });

  console.log(`Sending ${formatInt(count)} emails on ${app.label}, maxParallelism ${MAX_PARALLELISM}, retries on.\n`);
  await pool.start();
  const t0 = performance.now();
  const emails = makeEmails(count);
  await app.enqueueAll(
    (email, tx) => pool.enqueueAction(send, email, { onComplete: recordDelivery, context: { emailId: email.id }, name: `email-${email.id}`, tx }),
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
    pool.stop({ timeoutMs: 2000 }).finally(() => process.exit(130));
  };
  process.once("SIGINT", onSigint);

  await finished;
  const wallMs = performance.now() - t0;
  clearInterval(watchdog);
  stopDisplay();
  process.off("SIGINT", onSigint);
  await pool.stop();

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
    ["emails", formatInt(count)],
    ["sent", formatInt(progress.sent)],
    ["failed permanently", formatInt(progress.failed)],
    ["retries", formatInt(progress.retries)],
    ["attempts", `${formatInt(progress.attempts)} (${(progress.attempts / count).toFixed(2)} per email)`],
    ["wall time", formatMs(wallMs)],
    ["throughput", `${formatInt(Math.round((count * 1000) / wallMs))} emails/s`],
    ["enqueue-to-finish p50", formatMs(percentile(latencies, 50))],
    ["enqueue-to-finish p95", formatMs(percentile(latencies, 95))],
    [
      "deliveries table",
      `${formatInt(check.rows)} rows for ${formatInt(check.emails)} emails: ${ok ? "OK" : "MISMATCH"}`,
    ],
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
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
