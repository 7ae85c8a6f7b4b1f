/**
 * Connection faults: every session of a store is terminated by the server (as in a
 * restart or a network cut). Nothing crashes, the LISTEN connection comes back by itself,
 * the pool replaces dead connections, and work goes on without being lost or doubled.
 */
import { randomBytes } from "node:crypto";
import { expect, test } from "vitest";
import { DRIVER } from "../../src/driver/driver.js";
import { ManualClock, Workpool, type CompletedEvent } from "../../src/index.js";
import { postgresStore } from "../../src/drivers/postgres/index.js";
import type { PostgresDriver } from "../../src/drivers/postgres/driver.js";
import { CapturingLogger, nextEvent } from "../conformance/context.js";
import { adminQuery, terminateConnections, until, urlWithApplicationName, useCleanups, useSharedServer } from "./helpers.js";
import { T0 } from "../helpers/common.js";
import { openTestStore } from "../helpers/stores.js";

useSharedServer();

const cleanups = useCleanups();

/** A store whose sessions are named, so the test can terminate exactly them, plus a bystander store. */
async function setup() {
  const { schema, store: other } = await openTestStore("postgres", {
    connections: "own",
    appTables: ["CREATE TABLE app_rows (k TEXT PRIMARY KEY)"],
    cleanups,
  });
  const victimName = `wp_victim_${randomBytes(4).toString("hex")}`;
  const victim = postgresStore({ connectionString: urlWithApplicationName(victimName), schema });
  cleanups.push(() => victim.close());
  return { schema, victim, victimName, other, clock: new ManualClock(T0) };
}

/** The completed event of `workId`. */
function completed(pool: Workpool<unknown>, workId: string): Promise<CompletedEvent> {
  return nextEvent(pool, "completed", (e) => e.workId === workId);
}

test("after all its connections are terminated, a started worker reconnects LISTEN and goes on", async () => {
  const { victim, victimName, other, clock } = await setup();
  const logger = new CapturingLogger();
  const pool = new Workpool(victim, { name: "r", clock, logger });
  pool.defineAction("job", (_c, n: number) => n + 1);
  await pool.start();
  cleanups.push(() => pool.stop({ timeoutMs: 0 }));
  const listener = (victim[DRIVER] as PostgresDriver).listener;
  await until(() => listener.listening, "LISTEN");
  const producer = new Workpool(other, { name: "r", clock, logger: new CapturingLogger() });
  const job = producer.defineAction("job", (_c, n: number) => n);

  const first = await producer.enqueueAction(job, 1);
  expect((await completed(pool as Workpool<unknown>, first)).status).toBe("success");

  expect(await terminateConnections(victimName)).toBeGreaterThanOrEqual(1);
  await until(() => listener.connects >= 2 && listener.listening, "LISTEN to reconnect");

  const second = await producer.enqueueAction(job, 2);
  expect((await completed(pool as Workpool<unknown>, second)).status).toBe("success");
  expect(await producer.status(second)).toEqual({ state: "finished", result: { kind: "success", returnValue: 3 } });
  // Plain calls work again too: the pool dropped its dead connections.
  expect(await pool.status(first)).toMatchObject({ state: "finished" });
});

test("a connection killed under an open mutation transaction: nothing crashes, the work is rescued and commits once", async () => {
  const { schema, victim, victimName, other, clock } = await setup();
  const logger = new CapturingLogger();
  const leaseMs = 5000;
  const dying = new Workpool(victim, { name: "m", clock, logger, leaseMs });
  let gate!: () => void;
  const held = new Promise<void>((r) => (gate = r));
  let calls = 0;
  const write = dying.defineMutation("write", async (ctx, args: { k: string }) => {
    calls++;
    if (calls === 1) await held;
    await ctx.tx.query(`INSERT INTO "${schema}".app_rows (k) VALUES ($1)`, [args.k]);
    return "written";
  });
  const id = await dying.enqueueMutation(write, { k: "once" });
  const started = new Promise<void>((r) => dying.on("started", () => r()));
  const step = dying.runOnce();
  await started;
  // The mutation's transaction is open and idle, awaiting the handler: kill its session.
  expect(await terminateConnections(victimName)).toBeGreaterThanOrEqual(1);
  gate();
  await step;
  expect(logger.matching("could not be recorded").length).toBe(1);
  expect(await dying.status(id)).toEqual({ state: "running", previousAttempts: 0 });
  expect((await adminQuery<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".app_rows`))[0]!.n).toBe(0);

  // Another process takes over once the lease (and the dead one's leadership) lapse.
  const rescuer = new Workpool(other, {
    name: "m",
    clock,
    logger: new CapturingLogger(),
    leaseMs,
    defaultRetryBehavior: { maxAttempts: 3, initialBackoffMs: 100, base: 2 },
  });
  rescuer.defineMutation("write", async (ctx, args: { k: string }) => {
    calls++;
    await ctx.tx.query(`INSERT INTO "${schema}".app_rows (k) VALUES ($1)`, [args.k]);
    return "written";
  });
  clock.advance(60_000);
  expect((await rescuer.runOnce()).rescued).toBe(1);
  clock.advance(1000);
  await rescuer.runOnce();
  expect(await rescuer.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: "written" } });
  expect((await adminQuery<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".app_rows`))[0]!.n).toBe(1);
  // The store whose connections died works again.
  expect(await dying.status(id)).toMatchObject({ state: "finished" });
});
