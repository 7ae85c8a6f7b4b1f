/**
 * The dashboard in a real browser (Chromium through playwright-core) on a real SQLite
 * store with a live pool: counts change while work drains, its schedule is listed, filters, a work's page, cancel
 * of a running work, a running work's progress bar and each attempt's log lines, retry of a failed one, pause stopping starts, bulk actions with each
 * item's outcome, retry of all the work a filter matches, user data shown as text only,
 * and a token-protected dashboard refusing a request without its token. The run
 * saves the screenshots docs/dashboard.md shows.
 */
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { tmpdir } from "node:os";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { workpoolAdmin } from "../../src/admin/index.js";
import { Workpool, type Store } from "../../src/index.js";
import { deferred, quietLogger } from "../helpers/common.js";
import { serveDashboard, type ServedDashboard } from "../helpers/dashboard.js";
import { openTestStore, type SqliteTestStore } from "../helpers/stores.js";
import { launchChromium } from "./chromium.js";

const XSS = "<img src=x onerror=alert(1)>";
const TOKEN = "browser-test-token-0123456789";
// The docs' screenshots are rewritten only when asked (UPDATE_SCREENSHOTS=1): a test run leaves the tree as it was.
const IMAGES = process.env.UPDATE_SCREENSHOTS
  ? fileURLToPath(new URL("../../docs/images/", import.meta.url))
  : `${tmpdir()}/workpool-screenshots/`;

let opened: SqliteTestStore | undefined;
let store: Store<unknown>;
let live: Workpool<unknown>;
let dash: ServedDashboard;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;
/** alert() calls the page made: an XSS payload that ran would add one. */
const alerts: string[] = [];
/** The questions confirm() asked (each is accepted). */
const confirms: string[] = [];
/** The console's errors, a CSP violation among them. */
const consoleErrors: string[] = [];

let openGate!: () => void;
const gate = new Promise<void>((resolve) => (openGate = resolve));
let bounceFails = true;

beforeAll(async () => {
  opened = await openTestStore("sqlite", { prefix: "workpool-dash-" });
  store = opened.store as unknown as Store<unknown>;
  live = new Workpool(store, { name: "emails", logger: quietLogger, maxParallelism: 2 });
  dash = await serveDashboard({ store });
  browser = await launchChromium();
  page = await browser.context.newPage();
  page.on("console", (m) => {
    if (m.type() === "error") consoleErrors.push(m.text());
  });
  page.on("dialog", (d) => {
    if (d.type() === "confirm") {
      confirms.push(d.message());
      return void d.accept();
    }
    alerts.push(d.message());
    return void d.dismiss();
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await live?.stop({ timeoutMs: 0 });
  await dash?.close();
  await opened?.cleanup();
});

const send = () =>
  live.defineAction("send", async (_c, _a: { to: string }) => {
    await gate;
    return "sent";
  });

/** The number a pool row (overview) or the pool page shows for `state`. */
async function shownCount(state: string): Promise<number> {
  return Number(await page.locator(`[data-count="${state}"] b, tr[data-pool="emails"] [data-count="${state}"]`).first().innerText());
}

/** Waits until the page shows `state`'s count as `n`. */
async function untilCount(state: string, n: number): Promise<void> {
  await expect.poll(() => shownCount(state), { timeout: 20_000, interval: 100 }).toBe(n);
}

let sendJob: ReturnType<typeof send>;
let hang: ReturnType<Workpool<unknown>["defineAction"]>;
let bounce: ReturnType<Workpool<unknown>["defineAction"]>;
let noted: ReturnType<Workpool<unknown>["defineOnComplete"]>;

test("overview: live counts change while the pool drains, and the chart fills", async () => {
  sendJob = send();
  hang = live.defineAction(
    "hang",
    (c) => new Promise((_resolve, reject) => c.signal.addEventListener("abort", () => reject(c.signal.reason))),
  );
  bounce = live.defineAction("bounce", () => {
    if (!bounceFails) return "ok";
    const e = new Error(XSS);
    e.name = XSS;
    throw e;
  });
  noted = live.defineOnComplete("noted", () => undefined);
  await live.enqueueActionBatch(
    sendJob,
    Array.from({ length: 20 }, (_, i) => ({ to: `user${i}@example.com` })),
  );
  await live.schedule("weekly-digest", { cron: "0 9 * * 1", timezone: "Europe/Berlin" }, sendJob, { to: XSS });
  await live.start();
  await page.goto(dash.url);
  await page.locator('tr[data-pool="emails"]').waitFor();
  const schedule = page.locator('tr[data-schedule="weekly-digest"]');
  await schedule.waitFor();
  expect(await schedule.innerText()).toMatch(/emails\s+weekly-digest\s+0 9 \* \* 1\s+Europe\/Berlin\s+send/);
  await untilCount("running", 2);
  expect(await shownCount("pending")).toBe(18);
  openGate();
  await untilCount("success", 20);
  await untilCount("pending", 0);
  await expect.poll(() => page.locator(".charts").getAttribute("data-points").then(Number), { timeout: 20_000 }).toBeGreaterThan(1);
  await expect.poll(() => page.locator(".charts canvas").count()).toBe(2);
  mkdirSync(IMAGES, { recursive: true });
  await page.screenshot({ path: `${IMAGES}dashboard-overview.png` });
});

test("pool page: filter by state and search by id; a work's page shows args, attempts and errors as text", async () => {
  const failed = await live.enqueueAction(
    bounce,
    { note: XSS },
    {
      context: { html: XSS },
      onComplete: noted,
      retry: { maxAttempts: 2, initialBackoffMs: 10, base: 1 },
    },
  );
  const admin = workpoolAdmin(store);
  await expect.poll(async () => (await admin.get(failed))?.resultKind, { timeout: 20_000 }).toBe("failed");
  await page.locator(`tr[data-pool="emails"] a[href="#/pool/emails"]`).click();
  await page.locator("select[name=state]").selectOption("failed");
  await page.locator(".filters button[type=submit]").click();
  await expect.poll(() => page.locator("tr[data-id]").count()).toBe(1);
  expect(await page.locator("tr[data-id]").getAttribute("data-id")).toBe(failed);
  await page.locator("select[name=state]").selectOption("");
  await page.locator("input[name=search]").fill(failed);
  await page.locator(".filters button[type=submit]").click();
  await expect.poll(() => page.locator("tr[data-id]").count()).toBe(1);

  await page.locator(`a[href="#/work/${failed}"]`).click();
  await page.locator(".attempt").first().waitFor();
  expect(await page.locator('[data-field="args"]').innerText()).toContain(`"note": "${XSS}"`);
  expect(await page.locator('[data-field="context"]').innerText()).toContain(`"html": "${XSS}"`);
  expect(await page.locator(".attempt .error-message").first().innerText()).toBe(XSS);
  expect(await page.locator(".attempt .error-text b").first().innerText()).toBe(XSS);
  expect(await page.locator("main img").count()).toBe(0);
  expect(alerts).toEqual([]);
  expect(consoleErrors.join("\n")).toBe("");
  await page.screenshot({ path: `${IMAGES}dashboard-work.png`, fullPage: true });
});

test("retry of a failed work runs it again as new work", async () => {
  bounceFails = false;
  await page.locator("button", { hasText: "Retry" }).click();
  const link = page.locator("a", { hasText: /^[0-9A-Z]{26}$/ }).last();
  await link.waitFor();
  await link.click();
  await expect.poll(() => page.locator("[data-state]").first().getAttribute("data-state"), { timeout: 20_000 }).toBe("success");
});

test("cancel of a running work: its page shows it canceled", async () => {
  const id = await live.enqueueAction(hang, {});
  await page.goto(`${dash.url}#/work/${id}`);
  await expect.poll(() => page.locator("[data-state]").first().getAttribute("data-state"), { timeout: 20_000 }).toBe("running");
  await page.locator("button", { hasText: "Cancel" }).click();
  await expect.poll(() => page.locator("[data-state]").first().getAttribute("data-state"), { timeout: 20_000 }).toBe("canceled");
});

test("progress and logs: a running work's bar moves live, and each attempt's log lines are shown as text", async () => {
  const stages = [deferred(), deferred(), deferred()];
  const report = live.defineAction("report", async (c) => {
    if (c.attempt === 1) {
      c.log.error(XSS, { html: XSS });
      throw new Error("first attempt fails");
    }
    c.log.info(`working ${XSS}`);
    c.reportProgress(25);
    await stages[0]!.promise;
    c.reportProgress(75);
    await stages[1]!.promise;
    c.reportProgress({ note: XSS, done: 3 });
    await stages[2]!.promise;
    return "reported";
  });
  const id = await live.enqueueAction(report, {}, { retry: { maxAttempts: 2, initialBackoffMs: 10, base: 1 } });
  await page.goto(`${dash.url}#/work/${id}`);
  const bar = page.locator("progress[data-progress]");
  await expect.poll(() => bar.getAttribute("data-progress"), { timeout: 20_000 }).toBe("25");
  // The same page, not reloaded: its refresh moves the bar.
  stages[0]!.resolve();
  await expect.poll(() => bar.getAttribute("data-progress"), { timeout: 20_000 }).toBe("75");
  expect(await page.locator(".progress span").innerText()).toBe("75%");
  await page.screenshot({ path: `${IMAGES}dashboard-progress.png`, fullPage: true });
  const first = page.locator('.attempt[data-attempt="1"]');
  expect(await first.locator(".log-message").innerText()).toBe(XSS);
  expect(await first.locator(".log-fields").innerText()).toBe(JSON.stringify({ html: XSS }));
  expect(await page.locator('.attempt[data-attempt="2"] .state').innerText()).toBe("running");
  expect(await page.locator('.attempt[data-attempt="2"] .log-message').innerText()).toBe(`working ${XSS}`);
  stages[1]!.resolve();
  await expect.poll(() => page.locator('[data-field="progress"]').count(), { timeout: 20_000 }).toBe(1);
  expect(JSON.parse(await page.locator('[data-field="progress"]').innerText())).toEqual({ note: XSS, done: 3 });
  stages[2]!.resolve();
  await expect.poll(() => page.locator("[data-state]").first().getAttribute("data-state"), { timeout: 20_000 }).toBe("success");
  expect(await page.locator("main img").count()).toBe(0);
  expect(alerts).toEqual([]);
  expect(consoleErrors.join("\n")).toBe("");
});

test("pause: the page shows the pool paused and no attempt starts until resume", async () => {
  // One worker stepped by hand, so "nothing started" is a fact and not a matter of timing.
  await live.stop();
  const stepper = new Workpool(store, { name: "emails", logger: quietLogger });
  stepper.defineAction("send", () => "sent");
  await page.goto(`${dash.url}#/pool/emails`);
  await page.locator("button", { hasText: "Pause" }).click();
  await expect.poll(() => page.locator("[data-limit]").innerText()).toBe("paused (2)");
  const success = await shownCount("success");
  await live.enqueueActionBatch(sendJob, [{ to: "a@example.com" }, { to: "b@example.com" }]);
  expect((await stepper.runOnce()).claimed).toBe(0);
  await untilCount("pending", 2);
  expect(await shownCount("running")).toBe(0);
  await page.locator("button", { hasText: "Resume" }).click();
  await expect.poll(() => page.locator("[data-limit]").innerText()).toBe("2");
  expect((await stepper.runOnce()).claimed).toBe(2);
  await untilCount("success", success + 2);
  await stepper.stop({ timeoutMs: 0 });
});

test("bulk: select a page of pending work and cancel it in one action", async () => {
  const ids = await live.enqueueActionBatch(sendJob, [{ to: "c@example.com" }, { to: "d@example.com" }], { runAfter: 3_600_000 });
  await page.goto(`${dash.url}#/pool/emails`);
  await page.locator("select[name=state]").selectOption("pending");
  await page.locator(".filters button[type=submit]").click();
  await expect.poll(() => page.locator("tr[data-id]").count()).toBe(2);
  await page.locator('input[aria-label="select page"]').check();
  await page.locator("button", { hasText: "Cancel selected" }).click();
  await expect.poll(() => page.locator(".notice").innerText()).toBe("Canceled 2 of 2");
  const admin = workpoolAdmin(store);
  for (const id of ids) expect((await admin.get(id))!.resultKind).toBe("canceled");
  await expect.poll(() => page.locator("tr[data-id]").count()).toBe(0);
});

test("bulk retry: each item's outcome, a refusal with its reason and the new work as a link, all as text", async () => {
  const [waiting, dropped] = await live.enqueueActionBatch(sendJob, [{ to: "e@example.com" }, { to: XSS }], { runAfter: 3_600_000 });
  await live.cancel(dropped!);
  await page.goto(`${dash.url}#/pool/emails`);
  await page.locator("select[name=state]").selectOption("");
  await page.locator(".filters button[type=submit]").click();
  for (const id of [waiting, dropped]) await page.locator(`input[aria-label="select ${id}"]`).check();
  await page.locator("button", { hasText: "Retry selected" }).click();
  const outcome = page.locator(".bulk-outcome");
  await outcome.waitFor();
  expect(await outcome.locator(".notice").innerText()).toBe("Retried 1 of 2; 1 not done");
  expect(await outcome.getAttribute("data-failed")).toBe("1");
  const refused = outcome.locator(`li[data-id="${waiting}"]`);
  expect(await refused.getAttribute("data-ok")).toBe("false");
  expect(await refused.locator(".bulk-error").innerText()).toBe(
    `work ${waiting} is pending; only finished work that failed or was canceled can be retried`,
  );
  const retried = outcome.locator(`li[data-id="${dropped}"]`);
  expect(await retried.getAttribute("data-ok")).toBe("true");
  const newId = await retried.locator("a.new-id").innerText();
  expect(newId).toMatch(/^[0-9A-Z]{26}$/);
  expect(await workpoolAdmin(store).get(newId)).toMatchObject({ state: "pending", args: { to: XSS } });
  // Only links and text: no element the server's words could have made.
  expect(await outcome.locator("*:not(p, ul, li, a, span)").count()).toBe(0);
  expect(await page.locator("input[aria-label^='select ']:checked").count()).toBe(0);
  await retried.locator("a.new-id").click();
  await expect.poll(() => page.locator("h1").innerText()).toBe(newId);
  expect(alerts).toEqual([]);
  await live.cancel(newId as never);
  await live.cancel(waiting!);
});

test("retry all matching: the filtered list's failed or canceled work, all of it, after a count and a confirmation", async () => {
  const admin = workpoolAdmin(store);
  const ids = await live.enqueueActionBatch(sendJob, [{ to: "f@example.com" }, { to: "g@example.com" }, { to: XSS }], {
    runAfter: 3_600_000,
  });
  for (const id of ids) await live.cancel(id);
  const filter = { state: "canceled", handler: "send" } as const;
  const expected = (await admin.retryAll("emails", filter, { dryRun: true })).ids;
  expect(expected).toEqual(expect.arrayContaining(ids));
  await page.goto(`${dash.url}#/pool/emails`);
  await page.locator("select[name=state]").selectOption("");
  await page.locator(".filters button[type=submit]").click();
  // Work in any state is listed: there is no "all matching" to retry.
  await page.locator("tr[data-id]").first().waitFor();
  expect(await page.locator("button", { hasText: "Retry all matching" }).count()).toBe(0);
  await page.locator("select[name=state]").selectOption("canceled");
  await page.locator("input[name=handler]").fill("send");
  await page.locator(".filters button[type=submit]").click();
  confirms.length = 0;
  await page.locator("button", { hasText: "Retry all matching" }).click();
  await expect.poll(() => page.locator("p.notice").innerText()).toBe(`Retried ${expected.length} canceled work.`);
  expect(confirms).toEqual([`Retry all ${expected.length} canceled work matching the filter, each as new work?`]);
  for (const id of ids) expect((await admin.get(id))!.retriedAs).toMatch(/^[0-9A-Z]{26}$/);
  expect((await admin.retryAll("emails", filter, { dryRun: true })).count).toBe(0);
  // Again: nothing is left, and nothing is asked.
  await page.locator("button", { hasText: "Retry all matching" }).click();
  await expect
    .poll(() => page.locator("p.notice").innerText())
    .toBe("Nothing to retry: no canceled work matching the filter that was not retried already.");
  expect(confirms).toHaveLength(1);
  expect(alerts).toEqual([]);
  await admin.cancelAll("emails");
});

test("readOnly: no action is offered", async () => {
  const readOnly = await serveDashboard({ store, readOnly: true });
  try {
    await page.goto(`${readOnly.url}#/pool/emails`);
    await page.locator(".badge", { hasText: "read-only" }).waitFor();
    await page.locator("[data-limit]").waitFor();
    expect(await page.locator("main button", { hasText: /Pause|Resume|Cancel|Purge|Set limit|Retry/ }).count()).toBe(0);
    expect(await page.locator("main input[type=checkbox]").count()).toBe(0);
  } finally {
    await readOnly.close();
  }
});

test("with auth set, a request without the token is refused; ?token= opens the dashboard", async () => {
  const guarded = await serveDashboard({ store, auth: TOKEN });
  try {
    const refused = await page.goto(guarded.url);
    expect(refused!.status()).toBe(401);
    expect(await page.locator("body").innerText()).toContain("unauthorized");
    await page.goto(`${guarded.url}?token=${TOKEN}`);
    expect(new URL(page.url()).search).toBe("");
    await page.locator('tr[data-pool="emails"]').waitFor();
  } finally {
    await guarded.close();
  }
});
