// Durable workflows: an order flow with an approval event. Each order reserves stock
// (a mutation, exactly once, in the app's own table), charges a card (a flaky action,
// retried), waits for a manager's approval (an event with a timeout), then either ships
// and sends a receipt (a child workflow) or refunds. Half-way, the process "crashes"
// (the pool and manager are dropped without stopping) and a new one finishes every order
// by replaying the journals. Run it with `npm run example:workflow`; it uses SQLite in
// `workflow-example.db` (recreated on every run) and needs no server.
import { rmSync } from "node:fs";
import { Workpool } from "workpool";
import { sqliteStore } from "workpool/sqlite";
import { WorkflowManager } from "workpool/workflow";

const DB_FILE = "workflow-example.db";
for (const suffix of ["", "-wal", "-shm"]) rmSync(DB_FILE + suffix, { force: true });
const ORDERS = ["o-1", "o-2", "o-3", "o-4"];

/** One "process": a pool, its handlers and the workflows, as every worker defines them. */
function startProcess(store, label) {
  const pool = new Workpool(store, { name: "orders", maxParallelism: 8, logLevel: "WARN", leaseMs: 2000 });
  const workflows = new WorkflowManager(pool);
  const reserve = pool.defineMutation("reserve", (ctx, /** @type {{ order: string }} */ args) => {
    ctx.tx.prepare("INSERT INTO reservations (order_id) VALUES (?)").run(args.order);
  });
  let calls = 0;
  const charge = pool.defineAction("charge", async (_ctx, /** @type {{ order: string }} */ args) => {
    if (++calls % 3 === 0) throw new Error("card network timeout"); // retried
    return { id: `ch_${args.order}` };
  });
  const ship = pool.defineAction("ship", async (_ctx, /** @type {{ order: string }} */ args) => `parcel for ${args.order}`);
  const refund = pool.defineAction("refund", async (_ctx, /** @type {{ charge: string }} */ args) => `refunded ${args.charge}`);
  const email = pool.defineAction("email", async (_ctx, /** @type {{ order: string }} */ args) => `receipt mailed for ${args.order}`);
  const record = pool.defineMutation("record", (ctx, /** @type {import("workpool/workflow").WorkflowOnCompleteArgs} */ args) => {
    ctx.tx.prepare("INSERT INTO outcomes (order_id, outcome) VALUES (?, ?)").run(args.workflowId, JSON.stringify(args.result));
  });

  const receipt = workflows.define("receipt", async (step, /** @type {{ order: string }} */ args) =>
    step.runAction(email, args, { retry: true }),
  );
  const fulfil = workflows.define("fulfil", async (step, /** @type {{ order: string }} */ args) => {
    await step.runMutation(reserve, args);
    const card = await step.runAction(charge, args, { retry: { maxAttempts: 5, initialBackoffMs: 50, base: 2 } });
    const approval = await step.awaitEvent("approved", { timeoutMs: 1500 });
    if (approval.kind === "timeout" || !approval.value.ok) return { refund: await step.runAction(refund, { charge: card.id }) };
    const parcel = await step.runAction(ship, args);
    return { parcel, receipt: await step.runWorkflow(receipt, args), at: new Date(step.now()).toISOString() };
  });
  console.log(`[${label}] started`);
  return { pool, workflows, fulfil, record };
}

const store = sqliteStore({ filename: DB_FILE });
store.db.exec(
  "CREATE TABLE reservations (order_id TEXT NOT NULL); CREATE TABLE outcomes (order_id TEXT PRIMARY KEY, outcome TEXT NOT NULL)",
);

// The first process starts the orders and approves two of them.
const first = startProcess(store, "process 1");
await first.pool.start();
for (const order of ORDERS) await first.workflows.start(first.fulfil, { order }, { workflowId: order, onComplete: first.record });
// The approval of o-3 arrives before its run waits for it: the event is kept until it does.
await first.workflows.sendEvent("o-3", "approved", { ok: true });
await new Promise((r) => setTimeout(r, 500));
await first.workflows.sendEvent("o-1", "approved", { ok: true });
await first.workflows.sendEvent("o-2", "approved", { ok: false });
await new Promise((r) => setTimeout(r, 200));
// o-4 is never approved: its wait times out (in process 2) and it is refunded.

// "Crash": process 1 stops (its running attempts go back to the queue), and process 2
// takes over with fresh memory: it replays each run's journal and goes on.
await first.pool.stop({ timeoutMs: 0 });
const second = startProcess(store, "process 2");
await second.pool.start();
for (;;) {
  const states = await Promise.all(ORDERS.map((o) => second.workflows.status(o)));
  if (states.every((s) => s.state !== "running")) break;
  await new Promise((r) => setTimeout(r, 100));
}
await second.pool.stop();

for (const order of ORDERS) {
  const s = await second.workflows.status(order);
  const steps = (await second.workflows.steps(order)).map((e) => `${e.n}:${e.kind}:${e.name}:${e.state}`).join(" ");
  console.log(`${order}: ${s.state} ${JSON.stringify(s.result ?? s.error)}\n    journal: ${steps}`);
}
const reserved = store.db.prepare("SELECT count(*) AS n FROM reservations").get().n;
const recorded = store.db.prepare("SELECT count(*) AS n FROM outcomes").get().n;
console.log(`reservations: ${reserved} (one per order), onComplete rows: ${recorded} (one per order)`);
await store.close();
if (reserved !== ORDERS.length || recorded !== ORDERS.length) process.exit(1);
