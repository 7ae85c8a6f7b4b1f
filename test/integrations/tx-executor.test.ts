/**
 * The transaction executor protocol (src/driver/tx-executor.ts) with hand-written
 * executors over the raw drivers: what both stores refuse before writing anything, and
 * that what they accept is written in the caller's transaction.
 */
import Database from "better-sqlite3";
import pg from "pg";
import { describe, expect, test } from "vitest";
import { InvalidArgumentError, splitPlaceholders, transactionExecutor, type TransactionExecutor, type WorkId } from "../../src/index.js";
import { DATABASE_URL, adminQuery, urlWithDatabase, useCleanups, useSharedServer } from "../postgres/helpers.js";
import { expectNoWork, expectWorkRuns, pgSetup, sqliteSetup } from "./helpers.js";

const cleanups = useCleanups();

describe("splitPlaceholders", () => {
  test("cuts $n statements at each placeholder, repeating values where a number repeats", () => {
    expect(splitPlaceholders({ text: "SELECT $2, $1, $2", values: ["a", "b"], placeholders: "$n", wantsRows: true })).toEqual({
      parts: ["SELECT ", ", ", ", ", ""],
      values: ["b", "a", "b"],
    });
  });

  test("cuts ? statements in order, and refuses a placeholder without a value", () => {
    expect(splitPlaceholders({ text: "VALUES (?, ?)", values: [1, 2], placeholders: "?", wantsRows: false })).toEqual({
      parts: ["VALUES (", ", ", ")"],
      values: [1, 2],
    });
    expect(() => splitPlaceholders({ text: "SELECT $3", values: [1], placeholders: "$n", wantsRows: true })).toThrow(RangeError);
  });

  test("transactionExecutor takes a function only", () => {
    expect(() => transactionExecutor("SELECT 1" as never)).toThrow(TypeError);
  });
});

/** An executor over a pg client or pool: whatever `db` is, statements go to it as they are. */
function pgExecutor(db: { query(text: string, values: unknown[]): Promise<{ rows: unknown[] }> }): TransactionExecutor {
  return transactionExecutor(async (s) => (await db.query(s.text, [...s.values])).rows);
}

describe("PostgreSQL store", () => {
  useSharedServer();

  async function setup() {
    const base = await pgSetup(cleanups);
    const appPool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    cleanups.push(() => appPool.end());
    const workRows = async () => (await adminQuery<{ n: number }>(`SELECT count(*)::int AS n FROM "${base.schema}".work`))[0]!.n;
    return { ...base, appPool, workRows };
  }

  test("an executor inside BEGIN writes in that transaction: rollback leaves no work, commit runs it", async () => {
    const { pool, ping, appPool } = await setup();
    const client = await appPool.connect();
    try {
      await client.query("BEGIN");
      const dropped: WorkId = await pool.enqueueAction(ping, { n: 1 }, { tx: pgExecutor(client) });
      await client.query("ROLLBACK");
      await expectNoWork(pool, dropped);
      await client.query("BEGIN");
      const kept = await pool.enqueueAction(ping, { n: 2 }, { tx: pgExecutor(client) });
      await client.query("COMMIT");
      await expectWorkRuns(pool, kept, { pong: 2 });
    } finally {
      client.release();
    }
  });

  test("a uniqueKey through an executor keeps or replaces the pending work, inside the transaction", async () => {
    const { pool, ping, appPool } = await setup();
    const client = await appPool.connect();
    try {
      await client.query("BEGIN");
      const first = await pool.enqueueAction(ping, { n: 1 }, { tx: pgExecutor(client), uniqueKey: "u" });
      const kept = await pool.enqueueAction(ping, { n: 2 }, { tx: pgExecutor(client), uniqueKey: "u" });
      const replaced = await pool.enqueueAction(ping, { n: 3 }, { tx: pgExecutor(client), uniqueKey: "u", onConflict: "replace" });
      await client.query("COMMIT");
      expect([kept, replaced]).toEqual([first, first]);
      await expectWorkRuns(pool, first, { pong: 3 });
    } finally {
      client.release();
    }
  });

  test("an executor with no transaction open (autocommit) is refused, and nothing is written", async () => {
    const { pool, ping, appPool, workRows } = await setup();
    const err = await pool.enqueueAction(ping, { n: 1 }, { tx: pgExecutor(appPool) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as InvalidArgumentError).message).toMatch(/tx.*no open transaction/);
    expect(await workRows()).toBe(0);
  });

  test("an executor in a failed transaction, or on another database, is refused", async () => {
    const { pool, ping, appPool, workRows } = await setup();
    const client = await appPool.connect();
    try {
      await client.query("BEGIN");
      await client.query("SELECT 1/0").catch(() => undefined);
      await expect(pool.enqueueAction(ping, { n: 1 }, { tx: pgExecutor(client) })).rejects.toThrow(/failed transaction/);
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
    const other = new pg.Client({ connectionString: urlWithDatabase("postgres") });
    await other.connect();
    try {
      await other.query("BEGIN");
      await expect(pool.enqueueAction(ping, { n: 1 }, { tx: pgExecutor(other) })).rejects.toThrow(/database "postgres"/);
    } finally {
      await other.end();
    }
    expect(await workRows()).toBe(0);
  });

  test("an executor that does not answer with rows is refused, naming tx", async () => {
    const { pool, ping } = await setup();
    const silent = transactionExecutor(() => Promise.resolve(undefined));
    await expect(pool.enqueueAction(ping, { n: 1 }, { tx: silent })).rejects.toThrow(/tx.*did not answer as a PostgreSQL transaction/);
  });
});

/** An executor over a better-sqlite3 connection, answering asynchronously as an ORM would. */
function sqliteExecutor(db: Database.Database): TransactionExecutor {
  return transactionExecutor(async (s) => {
    await Promise.resolve();
    const stmt = db.prepare(s.text);
    return stmt.reader ? stmt.all(...s.values) : stmt.run(...s.values);
  });
}

describe("SQLite store", () => {
  async function setup() {
    const base = await sqliteSetup(cleanups);
    const connection = new Database(base.path);
    cleanups.push(async () => void connection.close());
    const workRows = () => (connection.prepare("SELECT count(*) AS n FROM workpool_work").get() as { n: number }).n;
    return { ...base, connection, workRows };
  }

  test("an executor inside a transaction writes in it: rollback leaves no work, commit runs it; a large batch is whole", async () => {
    const { pool, ping, connection } = await setup();
    connection.exec("BEGIN");
    const dropped = await pool.enqueueAction(ping, { n: 1 }, { tx: sqliteExecutor(connection) });
    connection.exec("ROLLBACK");
    await expectNoWork(pool, dropped);
    connection.exec("BEGIN");
    const kept = await pool.enqueueAction(ping, { n: 2 }, { tx: sqliteExecutor(connection) });
    const many = await pool.enqueueActionBatch(
      ping,
      Array.from({ length: 1201 }, (_, n) => ({ n })),
      { tx: sqliteExecutor(connection) },
    );
    connection.exec("COMMIT");
    expect(new Set((await pool.statusBatch(many)).map((s) => s.state))).toEqual(new Set(["pending"]));
    expect(connection.prepare("SELECT count(*) AS n FROM workpool_work").get()).toEqual({ n: 1202 });
    expect((await pool.status(kept)).state).toBe("pending");
  });

  test("a uniqueKey through an executor keeps or replaces the pending work, inside the transaction", async () => {
    const { pool, ping, connection } = await setup();
    connection.exec("BEGIN");
    const first = await pool.enqueueAction(ping, { n: 1 }, { tx: sqliteExecutor(connection), uniqueKey: "u" });
    const kept = await pool.enqueueAction(ping, { n: 2 }, { tx: sqliteExecutor(connection), uniqueKey: "u" });
    const replaced = await pool.enqueueAction(ping, { n: 3 }, { tx: sqliteExecutor(connection), uniqueKey: "u", onConflict: "replace" });
    connection.exec("COMMIT");
    expect([kept, replaced]).toEqual([first, first]);
    await expectWorkRuns(pool, first, { pong: 3 });
  });

  test("an executor with no transaction open is refused, leaves none open, and writes nothing", async () => {
    const { pool, ping, connection, workRows } = await setup();
    await expect(pool.enqueueAction(ping, { n: 1 }, { tx: sqliteExecutor(connection) })).rejects.toThrow(/tx.*no open transaction/);
    expect(connection.inTransaction).toBe(false);
    expect(workRows()).toBe(0);
  });

  test("an executor on another file is refused", async () => {
    const { pool, ping, workRows } = await setup();
    const elsewhere = await sqliteSetup(cleanups);
    const other = new Database(elsewhere.path);
    cleanups.push(async () => void other.close());
    other.exec("BEGIN");
    await expect(pool.enqueueAction(ping, { n: 1 }, { tx: sqliteExecutor(other) })).rejects.toThrow(/tx.*but this store uses/);
    other.exec("ROLLBACK");
    expect(workRows()).toBe(0);
  });
});
