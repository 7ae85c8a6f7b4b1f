/**
 * The dashboard's Workflows pages in a real browser (Chromium through playwright-core) on a
 * real SQLite store, its pool stepped by hand (runOnce) on a manual clock: counts per
 * workflow with the blocked run listed first, a version no live process defines, filters,
 * a run's journal timeline with its work and child links, the child tree opened a branch
 * at a time, pending sleeps and events, the send-event form, cancel, restart, fork and skip
 * from the run page, and user data (args, a step result, an error, an event payload) with
 * XSS payloads shown as text only. The run saves the screenshots docs/dashboard.md shows.
 */
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { workpoolAdmin } from "../../src/admin/index.js";
import { ManualClock } from "../../src/clock.js";
import { Workpool, type Store } from "../../src/index.js";
import { WorkflowManager } from "../../src/workflow/index.js";
import { drain } from "../conformance/workflow-kit.js";
import { quietLogger } from "../helpers/common.js";
import { serveDashboard, type ServedDashboard } from "../helpers/dashboard.js";
import { openTestStore, type SqliteTestStore } from "../helpers/stores.js";
import { launchChromium } from "./chromium.js";

const XSS = "<img src=x onerror=alert(1)></script><script>alert(2)</script>";
// The docs' screenshot is rewritten only when asked (UPDATE_SCREENSHOTS=1): a test run leaves the tree as it was.
const IMAGES = process.env.UPDATE_SCREENSHOTS
  ? fileURLToPath(new URL("../../docs/images/", import.meta.url))
  : `${tmpdir()}/workpool-screenshots/`;

let opened: SqliteTestStore | undefined;
let store: Store<unknown>;
let pool: Workpool<unknown>;
let wf: WorkflowManager<unknown>;
let dash: ServedDashboard;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;
const clock = new ManualClock(Date.UTC(2026, 0, 5, 9, 0, 0));
/** alert() calls the page made: an XSS payload that ran would add one. */
const alerts: string[] = [];
/** The console's errors, a CSP violation among them. */
const consoleErrors: string[] = [];
/** Whether the "explode" action throws (until a fix is "deployed"). */
let explodes = true;
/** Run ids by role. */
const ids = { blocked: "", order: "", failing: "", parent: "" };
/** Starts a run of "tree" (a child run that has a child run of its own). */
let startTree: () => Promise<string>;

/** A pool "orders" on the store and its WorkflowManager: one "process" of the app. */
function appProcess(): { pool: Workpool<unknown>; wf: WorkflowManager<unknown> } {
  const p = new Workpool(store, { name: "orders", logger: quietLogger, clock, maxParallelism: 10 });
  return { pool: p, wf: new WorkflowManager(p) };
}

beforeAll(async () => {
  opened = await openTestStore("sqlite", { prefix: "workpool-wf-dash-" });
  store = opened.store as unknown as Store<unknown>;

  // An earlier deploy: "flow" charged, then waited for "go". The next deploy's code no longer charges: that run blocks.
  const old = appProcess();
  const oldCharge = old.pool.defineAction("charge", () => "charged");
  const oldFlow = old.wf.define(
    "flow",
    async (step) => {
      await step.runAction(oldCharge, null);
      await step.awaitEvent("go");
    },
    { version: "2026-01" },
  );
  ids.blocked = await old.wf.start(oldFlow, null, { workflowId: "flow-1" });
  await drain(old.pool);
  // That deploy's processes are gone: once their heartbeat has expired, no live process defines version 2026-01.
  await old.pool.stop();
  clock.advance(120_000);

  ({ pool, wf } = appProcess());
  pool.defineAction("charge", () => "charged");
  wf.define("flow", async (step) => {
    await step.awaitEvent("go");
    return "flowed";
  });
  const quote = pool.defineAction("quote", (_c, a: { note: string }) => ({ echo: a.note }));
  const explode = pool.defineAction("explode", () => {
    if (explodes) throw new Error(XSS);
    return "fixed";
  });
  const child = wf.define("child", async (step, n: number) => step.runAction(quote, { note: `child ${n}` }));
  const order = wf.define("order", async (step, args: { note: string }) => {
    const q = await step.runAction(quote, args);
    const approved = await step.awaitEvent<{ by: string }>("approved");
    const sub = await step.runWorkflow(child, 1);
    return { q, approved, sub };
  });
  const failing = wf.define("failing", async (step) => step.runAction(explode, null, { retry: false }));
  const noted = pool.defineMutation("noted", () => undefined);
  const parent = wf.define("parent", async (step) => {
    const a = await step.runWorkflow(child, 2);
    await step.sleep(3_600_000);
    return a;
  });
  const branch = wf.define("branch", async (step) => step.runWorkflow(child, 3));
  const tree = wf.define("tree", async (step) => step.runWorkflow(branch, null));
  startTree = () => wf.start(tree, null, { workflowId: "tree-1" });
  ids.order = await wf.start(order, { note: XSS }, { workflowId: "order-1", context: { html: XSS }, onComplete: noted });
  clock.advance(1000);
  ids.failing = await wf.start(failing, null, { workflowId: "failing-1" });
  clock.advance(1000);
  ids.parent = await wf.start(parent, null, { workflowId: "parent-1" });
  await wf.sendEvent(ids.blocked, "go", null);
  await wf.sendEvent(ids.order, "note", { html: XSS });
  await drain(pool);

  // The dashboard on the pool's clock: the cancel it writes is due at once for the stepped pool.
  dash = await serveDashboard({ store, clock });
  browser = await launchChromium();
  page = await browser.context.newPage();
  page.on("console", (m) => {
    if (m.type() === "error") consoleErrors.push(m.text());
  });
  page.on("dialog", (d) => {
    if (d.type() === "confirm") return void d.accept();
    alerts.push(d.message());
    return void d.dismiss();
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await pool?.stop({ timeoutMs: 0 });
  await dash?.close();
  await opened?.cleanup();
});

/** The text of the count cell of `workflow` for `state` on the Workflows page. */
function countCell(workflow: string, state: string): Promise<string> {
  return page.locator(`.workflow-counts tr[data-workflow="${workflow}"] [data-count="${state}"]`).innerText();
}

/** The ids of the runs the "runs" table lists, in order. */
async function listedRuns(): Promise<string[]> {
  return page.locator('table[aria-label="runs"] tr[data-run]').evaluateAll((rows) => rows.map((r) => r.getAttribute("data-run") ?? ""));
}

test("Workflows page: counts per workflow, the blocked run first, a version no live process defines, filters", async () => {
  await page.goto(dash.url);
  await page.locator("header nav a", { hasText: "Workflows" }).click();
  await page.locator('.workflow-counts tr[data-workflow="order"]').waitFor();
  expect(await countCell("flow", "blocked")).toBe("1");
  expect(await countCell("order", "running")).toBe("1");
  expect(await countCell("failing", "failed")).toBe("1");
  expect(await countCell("child", "success")).toBe("1");
  // The blocked run is listed in its own section, above every other run.
  const firstRun = page.locator("tr[data-run]").first();
  expect(await firstRun.getAttribute("data-run")).toBe(ids.blocked);
  expect(await page.locator(".blocked-runs tr[data-run]").count()).toBe(1);
  expect(await page.locator(".blocked-runs .run-note").innerText()).toBe(
    "entry 0: the code called event go, the journal recorded action charge",
  );
  await expect.poll(listedRuns).toHaveLength(5);
  const orphan = page.locator('.orphan-versions tr[data-version="2026-01"]');
  expect(await orphan.innerText()).toMatch(/^orders\s+flow\s+2026-01\s+no\s+1$/);
  expect(await page.locator(".orphan-versions tr[data-version]").count()).toBe(1);
  mkdirSync(IMAGES, { recursive: true });
  await page.screenshot({ path: `${IMAGES}dashboard-workflows.png`, fullPage: true });
  await orphan.locator("button").click();
  await expect.poll(listedRuns).toEqual([ids.blocked]);
  expect(await page.locator("input[name=version]").inputValue()).toBe("2026-01");

  await page.locator('.workflow-counts tr[data-workflow="failing"] [data-count="failed"] button').click();
  await expect.poll(listedRuns).toEqual([ids.failing]);
  expect(await page.locator("input[name=name]").inputValue()).toBe("failing");
  expect(await page.locator("select[name=state]").inputValue()).toBe("failed");
  expect(await page.locator('table[aria-label="runs"] .run-note').innerText()).toContain(XSS);

  await page.locator(".run-filters button", { hasText: "Clear" }).click();
  await expect.poll(listedRuns).toHaveLength(5);
  await page.locator("input[name=name]").fill("order");
  await page.locator(".run-filters button[type=submit]").click();
  await expect.poll(listedRuns).toEqual([ids.order]);
  await page.locator("input[name=name]").fill("");
  await page.locator("select[name=state]").selectOption("unfinished");
  await page.locator(".run-filters button[type=submit]").click();
  await expect.poll(async () => (await listedRuns()).sort()).toEqual([ids.blocked, ids.order, ids.parent].sort());
  await page.locator("input[name=version]").fill("v2");
  await page.locator(".run-filters button[type=submit]").click();
  await expect.poll(listedRuns).toEqual([]);
  await page.locator("p", { hasText: "No run matches." }).waitFor();
  expect(alerts).toEqual([]);
});

test("a blocked run's page shows what the code called and what the journal recorded", async () => {
  await page.goto(`${dash.url}#/run/${ids.blocked}`);
  await page.locator('[data-field="blocked"]').waitFor();
  expect(await page.locator("[data-state]").first().getAttribute("data-state")).toBe("blocked");
  expect(await page.locator('[data-field="expected"]').innerText()).toBe("event go");
  expect(await page.locator('[data-field="recorded"]').innerText()).toBe("action charge");
});

test("run page: the journal timeline with work links, a child link and back, a pending sleep, events; user data as text", async () => {
  await page.goto(`${dash.url}#/run/${ids.order}`);
  await page.locator("tr[data-step='0']").waitFor();
  expect(await page.locator('[data-field="args"]').innerText()).toContain(`"note": ${JSON.stringify(XSS)}`);
  expect(await page.locator('[data-field="context"]').innerText()).toContain(`"html": ${JSON.stringify(XSS)}`);
  const step0 = page.locator("tr[data-step='0']");
  expect(await step0.locator(".step-name").innerText()).toBe("quote");
  expect(await step0.getAttribute("data-state")).toBe("success");
  expect(await step0.locator(".step-result").innerText()).toBe(JSON.stringify({ echo: XSS }));
  const step1 = page.locator("tr[data-step='1']");
  expect(await step1.getAttribute("data-state")).toBe("waiting");
  expect(await page.locator("li[data-wait='1'] .wait-name").innerText()).toBe("approved");
  const note = page.locator("tr[data-event]", { hasText: "note" });
  expect(await note.locator(".event-payload").innerText()).toBe(JSON.stringify({ html: XSS }));
  expect(await note.getAttribute("data-taken")).toBe("false");
  // The step's work page has its attempts.
  await step0.locator("a.work-link").click();
  await page.locator(".attempt").first().waitFor();
  expect(await page.locator('[data-field="args"]').innerText()).toContain(JSON.stringify(XSS));

  await page.goto(`${dash.url}#/run/${ids.failing}`);
  await page.locator('[data-field="error"]').waitFor();
  expect(await page.locator('[data-field="error"]').innerText()).toContain(XSS);
  expect(await page.locator("tr[data-step='0'] .step-error").innerText()).toContain(XSS);

  await page.goto(`${dash.url}#/run/${ids.parent}`);
  const childLink = page.locator("tr[data-step='0'] a.child-link");
  await childLink.waitFor();
  expect(await page.locator("li[data-wait='1'] .wake-at").count()).toBe(1);
  expect(await page.locator("ul.children > li[data-child]").count()).toBe(1);
  await page.screenshot({ path: `${IMAGES}dashboard-workflow-run.png`, fullPage: true });
  await childLink.click();
  await page.locator("a.parent").waitFor();
  expect(await page.locator(".run-name").innerText()).toBe("child");
  expect(await page.locator('[data-field="result"]').innerText()).toBe(JSON.stringify({ echo: "child 2" }, null, 2));
  await page.locator("a.parent").click();
  await expect.poll(() => page.locator("h1").innerText()).toBe(ids.parent);

  expect(await page.locator("main img, main script").count()).toBe(0);
  expect(alerts).toEqual([]);
  expect(consoleErrors.join("\n")).toBe("");
});

test("send-event form: a payload that is not JSON is refused in the page; a valid event completes the waiting run", async () => {
  await page.goto(`${dash.url}#/run/${ids.order}`);
  await page.locator("form.send-event").waitFor();
  const admin = workpoolAdmin(store);
  const sent = (await admin.workflowRun(ids.order))!.events.length;
  await page.locator("input[name=event-name]").fill("approved");
  await page.locator("textarea[name=event-payload]").fill("{ by: nobody }");
  await page.locator("button", { hasText: "Send event" }).click();
  await expect.poll(() => page.locator("form.send-event + p.error").innerText()).toMatch(/^payload: not JSON/);
  await page.locator("input[name=event-name]").fill("approved now");
  await page.locator("textarea[name=event-payload]").fill("{}");
  await page.locator("button", { hasText: "Send event" }).click();
  await expect.poll(() => page.locator("form.send-event + p.error").innerText()).toMatch(/^name: /);
  expect((await admin.workflowRun(ids.order))!.events).toHaveLength(sent);

  await page.locator("input[name=event-name]").fill("approved");
  await page.locator("textarea[name=event-payload]").fill(JSON.stringify({ by: XSS }));
  await page.locator("button", { hasText: "Send event" }).click();
  await expect.poll(() => page.locator(".notice").innerText()).toBe("Event approved sent.");
  await drain(pool);
  await expect.poll(() => page.locator("[data-state]").first().getAttribute("data-state"), { timeout: 20_000 }).toBe("success");
  expect(await page.locator('[data-field="result"]').innerText()).toContain(`"by": ${JSON.stringify(XSS)}`);
  expect(await page.locator("tr[data-event][data-taken=true] .event-payload").innerText()).toBe(JSON.stringify({ by: XSS }));
  expect(await page.locator("form.send-event").count()).toBe(0);
  expect(await page.locator("main img, main script").count()).toBe(0);
  expect(alerts).toEqual([]);
});

test("fork from an entry: a new run with the journal before it, linked from the page", async () => {
  await page.goto(`${dash.url}#/run/${ids.order}`);
  await page.locator("input[name=fork]").fill("1");
  await page.locator("button", { hasText: "Fork from entry" }).click();
  const link = page.locator("a.forked");
  await link.waitFor();
  const forkId = await link.innerText();
  const fork = (await workpoolAdmin(store).workflowRun(forkId))!;
  expect(fork.run).toMatchObject({ name: "order", args: { note: XSS }, state: "running" });
  expect(fork.steps.map((e) => [e.n, e.name, e.state])).toEqual([[0, "quote", "success"]]);
  await link.click();
  await expect.poll(() => page.locator("h1").innerText()).toBe(forkId);
  await page.locator("tr[data-step='0']").waitFor();
});

test("restart from an entry: a failed run runs its entries from there again", async () => {
  explodes = false;
  await page.goto(`${dash.url}#/run/${ids.failing}`);
  await page.locator("input[name=restart]").fill("0");
  await page.locator("button", { hasText: "Restart from entry" }).click();
  await expect.poll(() => page.locator(".notice").innerText()).toBe("Restarted from entry 0.");
  await drain(pool);
  await expect.poll(() => page.locator("[data-state]").first().getAttribute("data-state"), { timeout: 20_000 }).toBe("success");
  expect(await page.locator('[data-field="result"]').innerText()).toBe('"fixed"');
});

test("skip: a blocked run goes on without the entry it is blocked at", async () => {
  await page.goto(`${dash.url}#/run/${ids.blocked}`);
  await page.locator("button", { hasText: "Skip blocked entry" }).click();
  await expect.poll(() => page.locator(".notice").innerText()).toBe("Skipped entry 0.");
  await drain(pool);
  await expect.poll(() => page.locator("[data-state]").first().getAttribute("data-state"), { timeout: 20_000 }).toBe("success");
  expect(await page.locator('[data-field="result"]').innerText()).toBe('"flowed"');
  expect(await page.locator("button", { hasText: "Skip blocked entry" }).count()).toBe(0);
});

test("child tree: a child run's own children are read when its branch is opened", async () => {
  await startTree();
  await drain(pool);
  await page.goto(`${dash.url}#/run/tree-1`);
  const branch = page.locator("ul.children > li[data-child]");
  await branch.waitFor();
  expect(await branch.innerText()).toContain("branch");
  expect(await page.locator("ul.children ul.children li[data-child]").count()).toBe(0);
  await branch.locator("button.toggle").click();
  const grandchild = page.locator("ul.children ul.children li[data-child]");
  await grandchild.waitFor();
  expect(await grandchild.innerText()).toContain("child");
  await grandchild.locator("a").click();
  await page.locator("a.parent").waitFor();
  expect(await page.locator('[data-field="result"]').innerText()).toBe(JSON.stringify({ echo: "child 3" }, null, 2));
});

test("cancel from the run page: confirmed, carried out by a worker of the pool, the page shows it canceled", async () => {
  await page.goto(`${dash.url}#/run/${ids.parent}`);
  await page.locator("button", { hasText: "Cancel run" }).click();
  await expect.poll(() => page.locator(".notice").innerText()).toBe("Cancel requested: a worker of the pool carries it out.");
  await drain(pool);
  expect(await workpoolAdmin(store).workflow(ids.parent)).toMatchObject({ state: "canceled" });
  await expect.poll(() => page.locator("[data-state]").first().getAttribute("data-state"), { timeout: 20_000 }).toBe("canceled");
  expect(await page.locator("button", { hasText: "Cancel run" }).count()).toBe(0);
});

test("readOnly: the run page offers no action", async () => {
  const readOnly = await serveDashboard({ store, readOnly: true });
  try {
    await page.goto(`${readOnly.url}#/run/${ids.order}`);
    await page.locator(".badge", { hasText: "read-only" }).waitFor();
    await page.locator("tr[data-step='0']").waitFor();
    expect(await page.locator("main button", { hasText: /Cancel|Restart|Fork|Skip|Send/ }).count()).toBe(0);
  } finally {
    await readOnly.close();
  }
});
