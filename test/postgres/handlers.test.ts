/**
 * Mutation and onComplete handlers on PostgreSQL: `ctx.tx` is a pg client inside the
 * work's transaction, handlers may be async, and calls a handler makes to the pool run
 * inside its transaction (so they cannot wait on the handler's own locks).
 */
import type { PoolClient } from "pg";
import { expect, test } from "vitest";
import { ManualClock, UnknownWorkError, Workpool, type WorkId } from "../../src/index.js";
import { CapturingLogger } from "../conformance/context.js";
import { adminQuery, useCleanups, useSharedServer } from "./helpers.js";
import { openTestStore } from "../helpers/stores.js";
import { T0 } from "../helpers/common.js";

useSharedServer();

const cleanups = useCleanups();

async function setup() {
  const { schema, store } = await openTestStore("postgres", { connections: "own", cleanups });
  await adminQuery(`CREATE TABLE "${schema}".app_rows (k TEXT PRIMARY KEY)`);
  const clock = new ManualClock(T0);
  const logger = new CapturingLogger();
  const pool = new Workpool<PoolClient>(store, { name: "h", clock, logger, maxParallelism: 20 });
  const count = async () => (await adminQuery<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".app_rows`))[0]!.n;
  const insert = (tx: PoolClient, k: string) => tx.query(`INSERT INTO "${schema}".app_rows (k) VALUES ($1)`, [k]);
  return { schema, store, pool, clock, logger, count, insert };
}

test("a mutation that cancels its own work does not wait on its own row lock", async () => {
  const { pool } = await setup();
  const m = pool.defineMutation("self-cancel", async (ctx) => {
    await pool.cancel(ctx.workId);
    return "finished anyway";
  });
  const id = await pool.enqueueMutation(m, {});
  await pool.runOnce();
  // The mutation had already started: it commits its result; the cancel came too late to stop it.
  expect(await pool.status(id)).toEqual({ state: "finished", result: { kind: "success", returnValue: "finished anyway" } });
});

test("enqueue without tx inside a mutation joins the mutation's transaction (and rolls back with it)", async () => {
  const { pool } = await setup();
  const child = pool.defineAction("child", () => 1);
  const spawned = new Map<boolean, WorkId>();
  const parent = pool.defineMutation("parent", async (_ctx, fail: boolean) => {
    spawned.set(fail, await pool.enqueueAction(child, {}));
    if (fail) throw new Error("parent failed");
  });
  await pool.enqueueMutation(parent, true);
  await pool.enqueueMutation(parent, false);
  await pool.runOnce();
  await expect(pool.status(spawned.get(true)!)).rejects.toBeInstanceOf(UnknownWorkError);
  expect((await pool.status(spawned.get(false)!)).state).not.toBe("finished");
});

test("async handlers hold their own connection; the store keeps serving other calls meanwhile", async () => {
  const { pool, count, insert } = await setup();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const inside = new Promise<void>((r) => (entered = r));
  const slow = pool.defineMutation("slow", async (ctx, k: string) => {
    await insert(ctx.tx, k);
    entered();
    await gate;
    return k;
  });
  const oc = pool.defineOnComplete("oc", async (ctx, { workId }) => {
    await new Promise((r) => setTimeout(r, 5));
    await insert(ctx.tx, `oc:${workId}`);
  });
  const id = await pool.enqueueMutation(slow, "a", { onComplete: oc });
  const step = pool.runOnce();
  await inside;
  // While the mutation's transaction is open: its write is invisible, and other calls work.
  expect(await count()).toBe(0);
  expect(await pool.status(id)).toEqual({ state: "running", previousAttempts: 0 });
  const other = await pool.enqueueMutation(slow, "b");
  release();
  await step;
  expect(await count()).toBe(2);
  expect(await pool.status(id)).toMatchObject({
    state: "finished",
    result: { kind: "success", returnValue: "a" },
    onComplete: { state: "done" },
  });
  await pool.runOnce();
  expect(await pool.status(other)).toMatchObject({ state: "finished", result: { kind: "success", returnValue: "b" } });
  expect(await count()).toBe(3);
});

test("a handler's failed SQL statement rolls back only the handler; the failure is recorded", async () => {
  const { pool, count, insert } = await setup();
  const dup = pool.defineMutation("dup", async (ctx) => {
    await insert(ctx.tx, "same");
    await insert(ctx.tx, "same");
  });
  const id = await pool.enqueueMutation(dup, {});
  await pool.runOnce();
  const s = await pool.status(id);
  expect(s.state === "finished" && s.result?.kind === "failed" && s.result.error).toMatch(/duplicate key/);
  expect(await count()).toBe(0);
});
