// The email demo's application side, shared by the main process (main.js) and the
// worker processes it starts with --workers (worker.js): the stores, the app's tables,
// the fake provider, and the pool with its handlers.
import { rmSync } from "node:fs";
import { NonRetryableError, Workpool } from "workpool";

export const DB_FILE = "demo.db";
export const MAX_PARALLELISM = 20;
/** Share of send attempts that fail with a transient error (retried). */
const TRANSIENT_FAILURE_RATE = 0.1;
/** One address in this many bounces for good (NonRetryableError). */
const BOUNCE_EVERY = 100;

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

// Stores

/**
 * The store the demo runs on: SQLite in `demo.db` (fresh each run), or PostgreSQL when
 * `DATABASE_URL` is set and this build has the PostgreSQL store.
 *
 * @param {boolean} [fresh]  start from empty tables (the main process) or open them as they are (workers)
 *
 * @returns {Promise<AppStore>}
 */
export async function makeStore(fresh = true) {
  const url = process.env.DATABASE_URL;
  if (url) {
    const postgres = await import("workpool/postgres").catch(() => null);
    if (postgres) return postgresAppStore(postgres, url, fresh);
    console.log("DATABASE_URL is set, but this build has no PostgreSQL store; running on SQLite.\n");
  }
  return sqliteAppStore(DB_FILE, fresh);
}

/**
 * SQLite: the store opens `file` (WAL); the app has its own connection to the same file
 * for its transactions, as a real app would. onComplete handlers write synchronously
 * with `ctx.tx`, the store's connection inside its transaction.
 *
 * @param {string} file
 * @param {boolean} fresh  delete the file first (the main process; not its workers)
 * @returns {Promise<AppStore>}
 */
async function sqliteAppStore(file, fresh) {
  const [{ default: Database }, { sqliteStore }] = await Promise.all([import("better-sqlite3"), import("workpool/sqlite")]);
  if (fresh) for (const suffix of ["", "-wal", "-shm"]) rmSync(file + suffix, { force: true });
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
 * @param {boolean} fresh  drop the schema first (the main process; not its workers)
 * @returns {Promise<AppStore>}
 */
async function postgresAppStore(postgres, url, fresh) {
  const { default: pg } = await import("pg");
  const schema = "workpool_email_demo";
  const app = new pg.Pool({ connectionString: url, max: 2 });
  if (fresh) await app.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
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
          await client.query(`INSERT INTO ${schema}.emails (id, recipient, subject) VALUES ($1, $2, $3)`, [
            email.id,
            email.to,
            email.subject,
          ]);
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
export function makeEmails(count) {
  return Array.from({ length: count }, (_, id) => ({
    id,
    to: id % BOUNCE_EVERY === BOUNCE_EVERY - 1 ? `nobody-${id}@invalid.example` : `user-${id}@example.com`,
    subject: `Your weekly digest #${id}`,
  }));
}

/**
 * The demo's pool and handlers, the same in every process that runs it.
 *
 * @param {AppStore} app
 * @param {import("workpool").Logger} logger
 */
export function createPool(app, logger) {
  const pool = new Workpool(app.store, {
    name: "emails",
    maxParallelism: MAX_PARALLELISM,
    retryActionsByDefault: true,
    defaultRetryBehavior: { maxAttempts: 5, initialBackoffMs: 50, base: 2 },
    logLevel: "ERROR",
    logger,
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
  return { pool, send, recordDelivery };
}
