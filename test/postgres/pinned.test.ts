/**
 * The client the driver holds for back-to-back autocommit statements (pinned.ts), on a
 * real pool: it is reused while free, never makes a statement wait, goes back to the
 * pool when someone waits, when idle, when its connection fails, and at close().
 */
import { once } from "node:events";
import { expect, test } from "vitest";
import pg from "pg";
import { PINNED_IDLE_MS, PinnedConnection } from "../../src/drivers/postgres/connection/pinned.js";
import { DATABASE_URL, adminQuery, until, useCleanups, useSharedServer } from "./helpers.js";

useSharedServer();
const cleanups = useCleanups();

function setup(max: number) {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max });
  pool.on("error", () => undefined);
  let t = 0;
  const pinned = new PinnedConnection(pool, () => t);
  cleanups.push(async () => {
    pinned.close();
    await pool.end();
  });
  const pid = async () => (await pinned.query<{ pid: number }>({ text: "SELECT pg_backend_pid() AS pid" })).rows[0]!.pid;
  /** Runs a statement (through the pool), waits until a client is held, and returns its backend's pid. */
  const hold = async () => {
    await pid();
    await pinned.settled();
    return pid();
  };
  return { pool, pinned, pid, hold, advance: (ms: number) => (t += ms) };
}

test("back-to-back statements run on one held client", async () => {
  const { pool, pinned, pid } = setup(3);
  expect(pinned.holding).toBe(false);
  await pid(); // through the pool; begins holding a client
  await pinned.settled();
  expect(pinned.holding).toBe(true);
  const first = await pid();
  for (let i = 0; i < 5; i++) expect(await pid()).toBe(first);
  // Held, so checked out: the pool counts it as not idle.
  expect(pool.totalCount - pool.idleCount).toBe(1);
});

test("a statement issued while the held client is busy runs on another connection at once", async () => {
  const { pinned, pid, hold } = setup(3);
  const held = await hold();
  const lock = new pg.Client({ connectionString: DATABASE_URL });
  await lock.connect();
  cleanups.push(() => lock.end());
  await lock.query("SELECT pg_advisory_lock(424242)");
  // Blocks on the lock, on the held client.
  const blocked = pinned.query<{ pid: number }>({
    text: "SELECT pg_backend_pid() AS pid, pg_advisory_lock(424242), pg_advisory_unlock(424242)",
  });
  const other = await pid();
  expect(other).not.toBe(held);
  await lock.query("SELECT pg_advisory_unlock(424242)");
  expect((await blocked).rows[0]!.pid).toBe(held);
});

test("the held client goes back as soon as someone waits for a connection", async () => {
  const { pool, pinned, pid, hold } = setup(2);
  await hold();
  expect(pinned.holding).toBe(true);
  const app = await pool.connect(); // the pool's last connection
  cleanups.push(async () => app.release());
  const waiting = pool.connect();
  expect(pool.waitingCount).toBe(1);
  await pid(); // runs on the held client, then hands it to the waiter
  expect(pinned.holding).toBe(false);
  const got = await waiting;
  got.release();
});

test("no client is taken while the pool has none to spare", async () => {
  const { pool, pinned, pid } = setup(1);
  const app = await pool.connect();
  const answered = pid(); // queued in the pool behind the app's client
  await pinned.settled();
  expect(pinned.holding).toBe(false);
  app.release();
  await answered;
  expect(pinned.holding).toBe(false);
});

test("a held client unused for the idle time goes back to the pool", async () => {
  const { pool, pinned, hold, advance } = setup(2);
  await hold();
  advance(PINNED_IDLE_MS - 1);
  pinned.checkIdle();
  expect(pinned.holding).toBe(true);
  advance(1);
  pinned.checkIdle();
  expect(pinned.holding).toBe(false);
  expect(pool.idleCount).toBe(pool.totalCount);
});

test("a held client whose connection dies is destroyed, and statements carry on", async () => {
  const { pool, pinned, pid, hold } = setup(2);
  const held = await hold();
  const removed = once(pool, "remove");
  await adminQuery("SELECT pg_terminate_backend($1)", [held]);
  await removed;
  expect(pinned.holding).toBe(false);
  const next = await pid();
  expect(next).not.toBe(held);
});

test("a held client whose session is terminated during its statement goes back at once", async () => {
  const { pinned, hold } = setup(2);
  const held = await hold();
  const sleeping = pinned.query({ text: "SELECT pg_sleep(30)" });
  // Its rejection is awaited below; handled from now on, so it never counts as unhandled.
  const failed = expect(sleeping).rejects.toThrow(/terminating connection/);
  await until(
    async () =>
      (
        await adminQuery<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1 AND wait_event = 'PgSleep'", [held])
      )[0]!.n === 1,
    "the sleep",
  );
  await adminQuery("SELECT pg_terminate_backend($1)", [held]);
  await failed;
  // Given back by the time the failure reaches the caller: the next statement opens a new session.
  expect(pinned.holding).toBe(false);
});

test("a server error keeps the held client; close() gives it back", async () => {
  const { pool, pinned, pid, hold } = setup(2);
  const held = await hold();
  await expect(pinned.query({ text: "SELECT 1/0" })).rejects.toThrow(/division by zero/);
  expect(await pid()).toBe(held);
  pinned.close();
  expect(pinned.holding).toBe(false);
  expect(pool.idleCount).toBe(pool.totalCount);
  await pid(); // still answers, through the pool, without holding again
  expect(pinned.holding).toBe(false);
});

test("makeRoom() gives the idle held client back when the pool has no other connection", async () => {
  const { pool, pinned, hold } = setup(2);
  await hold();
  expect(pinned.holding).toBe(true);
  const app = await pool.connect(); // the pool's other connection
  cleanups.push(async () => app.release());
  pinned.makeRoom();
  expect(pinned.holding).toBe(false);
  const tx = await pool.connect(); // would wait for the idle timer otherwise
  tx.release();
});

test("makeRoom() keeps the held client while the pool has connections to spare", async () => {
  const { pinned, hold } = setup(3);
  await hold();
  pinned.makeRoom();
  expect(pinned.holding).toBe(true);
});
