/**
 * The dashboard's HTTP handler on a real server over each store: its JSON endpoints read
 * through the admin API, bulk actions checked whole and then answered per id, and its guards (CSRF on every change, readOnly, auth by token or
 * function, loopback only without auth) refuse before anything changes.
 */
import { request } from "node:http";
import { networkInterfaces } from "node:os";
import { afterEach, describe, expect, test } from "vitest";
import { workpoolAdmin } from "../../src/admin/index.js";
import { dashboardHandler } from "../../src/dashboard/index.js";
import { InvalidArgumentError } from "../../src/index.js";
import { csrfOf, getJson, postAction, serveDashboard, type ServedDashboard } from "../helpers/dashboard.js";
import type { StoreHarness } from "./harness.js";
import { CapturingLogger, useTestContext, withDriver } from "./context.js";
import { defineDashboardChartTests } from "./dashboard-chart.js";

const TOKEN = "s3cret-token-of-the-test-0123456789";

/** This machine's first non-loopback IPv4 address. */
function outsideAddress(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  throw new Error("this test needs a network interface besides loopback");
}

/** A GET with a chosen Host header (fetch does not let one set it). */
function rawGet(url: URL, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
    });
    req.on("error", reject).end();
  });
}

export function defineDashboardTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("dashboard: HTTP handler", () => {
    const ctx = useTestContext(harness);
    const served: ServedDashboard[] = [];
    afterEach(async () => {
      for (const s of served.splice(0)) await s.close();
    });

    /** A store with pool "jobs": one failed work (with an XSS-shaped message) and two pending ones. */
    async function setUp(options: Record<string, unknown> = {}, host?: string) {
      const t = await ctx();
      const pool = t.pool({ name: "jobs" });
      const job = pool.defineAction("job", (_c, a: { n: number }) => {
        if (a.n === 0) throw new Error("<img src=x onerror=alert(1)>");
        return a.n;
      });
      const failed = await pool.enqueueAction(job, { n: 0 });
      await pool.runOnce();
      const pending = await pool.enqueueActionBatch(job, [{ n: 1 }, { n: 2 }], { runAfter: 60_000 });
      const s = await serveDashboard({ store: t.h.store, clock: t.clock, ...options }, host);
      served.push(s);
      return { t, s, pool, job, failed, pending: pending as string[], admin: workpoolAdmin(t.h.store, { clock: t.clock }) };
    }

    test("reads: pools, a filtered page, one work with its attempts' errors, as the admin API gives them", async () => {
      const { s, pool, job, failed, admin } = await setUp();
      const pools = await getJson(s.url, "api/pools");
      expect(pools).toEqual({ status: 200, body: { pools: await admin.pools() } });
      expect(await getJson(s.url, "api/schedules")).toEqual({ status: 200, body: { schedules: [] } });
      await pool.schedule("nightly", { cron: "0 3 * * *", timezone: "Europe/Paris" }, job, { n: 5 });
      const schedules = await getJson(s.url, "api/schedules");
      expect(schedules).toEqual({ status: 200, body: { schedules: JSON.parse(JSON.stringify(await admin.schedules())) as unknown } });
      expect((schedules.body as { schedules: unknown[] }).schedules).toMatchObject([
        { pool: "jobs", id: "nightly", spec: { cron: "0 3 * * *", timezone: "Europe/Paris" }, handler: "job" },
      ]);
      expect(await getJson(s.url, "api/schedules?pool=other")).toEqual({ status: 200, body: { schedules: [] } });
      const page = await getJson(s.url, "api/list?pool=jobs&state=pending&limit=1");
      expect(page.status).toBe(200);
      const body = page.body as { items: { id: string }[]; cursor: string };
      expect(body.items).toHaveLength(1);
      const next = await getJson(s.url, `api/list?pool=jobs&state=pending&cursor=${body.cursor}`);
      expect((next.body as { items: unknown[]; cursor: null }).items).toHaveLength(1);
      expect((next.body as { cursor: null }).cursor).toBeNull();
      const work = await getJson(s.url, `api/work?id=${failed}`);
      expect(work.body).toEqual(JSON.parse(JSON.stringify(await admin.get(failed))));
      expect((work.body as { attemptHistory: { error: { message: string } }[] }).attemptHistory[0]!.error.message).toBe(
        "<img src=x onerror=alert(1)>",
      );
      expect((await getJson(s.url, "api/work?id=00000000000000000000000000")).status).toBe(404);
      expect(await getJson(s.url, "api/list?pool=jobs&state=sleeping")).toMatchObject({ status: 400, body: { field: "state" } });
      expect(await getJson(s.url, "api/list?pool=jobs&limit=501")).toMatchObject({ status: 400, body: { field: "limit" } });
      expect((await getJson(s.url, "api/nothing")).status).toBe(404);
      const html = await fetch(s.url);
      expect(html.status).toBe(200);
      expect(html.headers.get("content-security-policy")).toContain("script-src 'self'");
      expect(html.headers.get("content-security-policy")).not.toContain("unsafe-inline");
      expect(await html.text()).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    });

    test("actions need the CSRF token, JSON and the same origin; with them they act", async () => {
      const { s, failed, pending, admin } = await setUp();
      const csrf = await csrfOf(s.url);
      expect((await postAction(s.url, "pause", { pool: "jobs" })).status).toBe(403);
      expect((await postAction(s.url, "pause", { pool: "jobs" }, { "x-workpool-csrf": "wrong" })).status).toBe(403);
      const crossSite = await postAction(s.url, "pause", { pool: "jobs" }, { "x-workpool-csrf": csrf, origin: "http://evil.example" });
      expect(crossSite.status).toBe(403);
      for (const origin of ["null", "not a url"]) {
        expect((await postAction(s.url, "pause", { pool: "jobs" }, { "x-workpool-csrf": csrf, origin })).status).toBe(403);
      }
      const form = await fetch(new URL("api/action/pause", s.url), {
        method: "POST",
        headers: { "content-type": "text/plain", "x-workpool-csrf": csrf },
        body: JSON.stringify({ pool: "jobs" }),
      });
      expect(form.status).toBe(415);
      expect((await fetch(new URL("api/pools", s.url), { method: "POST" })).status).toBe(405);
      expect((await admin.pools())[0]!.pausedFrom).toBeNull();

      const ok = { "x-workpool-csrf": csrf };
      expect(await postAction(s.url, "pause", { pool: "jobs" }, ok)).toEqual({ status: 200, body: { done: true } });
      expect((await admin.pools())[0]!.pausedFrom).toBe(10);
      expect(await postAction(s.url, "set-parallelism", { pool: "jobs", n: 3 }, ok)).toEqual({ status: 200, body: { done: true } });
      expect((await admin.pools())[0]).toMatchObject({ maxParallelism: 3, pausedFrom: null });
      expect(await postAction(s.url, "set-parallelism", { pool: "jobs", n: 10_001 }, ok)).toMatchObject({
        status: 400,
        body: { field: "n" },
      });
      expect(await postAction(s.url, "pause", { pool: "jobs", extra: 1 }, ok)).toMatchObject({
        status: 400,
        body: { field: "body.extra" },
      });
      expect(await postAction(s.url, "cancel", { ids: [] }, ok)).toMatchObject({ status: 400, body: { field: "ids" } });

      const retried = await postAction(s.url, "retry", { ids: [failed] }, ok);
      expect(retried).toMatchObject({ status: 200, body: { results: [{ id: failed, ok: true }], done: 1, failed: 0 } });
      const [r] = (retried.body as { results: { id: string; ok: boolean; newId: string }[] }).results;
      expect((await admin.get(r!.newId))!.state).toBe("pending");
      expect(await postAction(s.url, "cancel", { ids: [pending[0]] }, ok)).toEqual({
        status: 200,
        body: { results: [{ id: pending[0], ok: true }], done: 1, failed: 0 },
      });
      expect(await postAction(s.url, "cancel-all", { pool: "jobs" }, ok)).toEqual({ status: 200, body: { count: 2 } });
      expect(await postAction(s.url, "purge-finished", { pool: "jobs" }, ok)).toEqual({ status: 200, body: { count: 4 } });
      expect((await admin.list("jobs")).items).toEqual([]);
    });

    test("bulk actions: malformed input is refused before anything is done, naming the field", async () => {
      const { s, failed, pending, admin } = await setUp();
      const ok = { "x-workpool-csrf": await csrfOf(s.url) };
      const before = await admin.list("jobs");
      const post = (name: string, body: unknown) => postAction(s.url, name, body, ok);
      expect(await post("retry", { ids: [failed, "not-a-work-id"] })).toMatchObject({ status: 400, body: { field: "ids[1]" } });
      expect(await post("cancel", { ids: [pending[0], "not-a-work-id"] })).toMatchObject({ status: 400, body: { field: "ids[1]" } });
      expect(await post("cancel", { ids: [pending[0], 7] })).toMatchObject({ status: 400, body: { field: "ids[1]" } });
      expect(await post("cancel", { ids: pending[0] })).toMatchObject({ status: 400, body: { field: "ids" } });
      expect(await post("cancel", {})).toMatchObject({ status: 400, body: { field: "ids" } });
      expect(await post("cancel", [pending[0]])).toMatchObject({ status: 400, body: { field: "body" } });
      expect(await post("cancel", { ids: [pending[0]], force: true })).toMatchObject({ status: 400, body: { field: "body.force" } });
      const tooMany = await post("cancel", { ids: Array.from({ length: 501 }, () => pending[0]) });
      expect(tooMany).toMatchObject({
        status: 400,
        body: { field: "ids", error: "ids: must be an array of 1 to 500 work ids, got 501 ids" },
      });
      const notJson = await fetch(new URL("api/action/cancel", s.url), {
        method: "POST",
        headers: { "content-type": "application/json", ...ok },
        body: `{"ids": ["${pending[0]}"`,
      });
      expect(notJson.status).toBe(400);
      expect(await notJson.json()).toMatchObject({ field: "body" });
      expect(await admin.list("jobs")).toEqual(before);
    });

    test("bulk actions: each well-formed id is acted on and answered for; 207 when some were not done", async () => {
      const { t, s, failed, pending, admin } = await setUp();
      const ok = { "x-workpool-csrf": await csrfOf(s.url) };
      const retried = await postAction(s.url, "retry", { ids: [failed, pending[0]] }, ok);
      const newId = (retried.body as { results: { newId?: string }[] }).results[0]!.newId!;
      expect(retried).toEqual({
        status: 207,
        body: {
          results: [
            { id: failed, ok: true, newId },
            {
              id: pending[0],
              ok: false,
              error: `work ${pending[0]} is pending; only finished work that failed or was canceled can be retried`,
            },
          ],
          done: 1,
          failed: 1,
        },
      });
      expect(await admin.get(newId)).toMatchObject({ state: "pending", handler: "job", args: { n: 0 } });
      const unknown = "00000000000000000000000000";
      expect(await postAction(s.url, "cancel", { ids: [pending[0], unknown, failed] }, ok)).toEqual({
        status: 207,
        body: {
          results: [
            { id: pending[0], ok: true },
            { id: unknown, ok: false, error: "no work with this id" },
            { id: failed, ok: false, error: "already finished (failed)" },
          ],
          done: 1,
          failed: 2,
        },
      });
      expect((await admin.get(pending[0]!))!.resultKind).toBe("canceled");
      expect(await postAction(s.url, "retry", { ids: [unknown] }, ok)).toEqual({
        status: 207,
        body: { results: [{ id: unknown, ok: false, error: "no work with this id" }], done: 0, failed: 1 },
      });

      // An item the store fails on says so without the store's words; the others are still done, and the error is logged once.
      const logger = new CapturingLogger();
      const failing = withDriver(t.h.store, {
        readWorkDetail: (real, id) => (id === pending[1] ? Promise.reject(new Error("password=hunter2")) : real.readWorkDetail(id)),
      });
      const s2 = await serveDashboard({ store: failing, clock: t.clock, logger });
      served.push(s2);
      const again = await postAction(
        s2.url,
        "retry",
        { ids: [pending[1], pending[0], pending[1]] },
        { "x-workpool-csrf": await csrfOf(s2.url) },
      );
      const againId = (again.body as { results: { newId?: string }[] }).results[1]!.newId!;
      expect(again).toEqual({
        status: 207,
        body: {
          results: [
            { id: pending[1], ok: false, error: "internal error (the server's log has the details)" },
            { id: pending[0], ok: true, newId: againId },
            { id: pending[1], ok: false, error: "internal error (the server's log has the details)" },
          ],
          done: 1,
          failed: 2,
        },
      });
      expect(logger.lines.map((l) => [l.fields.path, (l.fields.err as Error).message])).toEqual([
        ["/api/action/retry", "password=hunter2"],
      ]);
    });

    test("readOnly: the session says so and every action is refused", async () => {
      const { s, pending, admin } = await setUp({ readOnly: true });
      expect((await getJson(s.url, "api/session")).body).toMatchObject({ readOnly: true });
      const ok = { "x-workpool-csrf": await csrfOf(s.url) };
      expect(await postAction(s.url, "pause", { pool: "jobs" }, ok)).toMatchObject({
        status: 403,
        body: { error: "this dashboard is read-only" },
      });
      expect((await postAction(s.url, "cancel", { ids: pending }, ok)).status).toBe(403);
      expect((await admin.pools())[0]!.pausedFrom).toBeNull();
      expect((await admin.get(pending[0]!))!.state).toBe("pending");
    });

    test("auth by token: refused without it; accepted as Bearer, and as ?token= kept in an HttpOnly cookie", async () => {
      const { s } = await setUp({ auth: TOKEN });
      expect((await fetch(new URL("api/pools", s.url))).status).toBe(401);
      expect((await fetch(s.url)).status).toBe(401);
      expect((await fetch(new URL("api/pools", s.url), { headers: { authorization: "Bearer nope-nope-nope-nope" } })).status).toBe(401);
      expect((await getJson(s.url, "api/pools", { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
      const login = await fetch(new URL(`?token=${TOKEN}`, s.url), { redirect: "manual" });
      expect(login.status).toBe(303);
      expect(login.headers.get("location")).toBe("/");
      const setCookie = login.headers.get("set-cookie")!;
      expect(setCookie).toContain("HttpOnly");
      expect(setCookie).toContain("SameSite=Strict");
      const cookie = setCookie.split(";")[0]!;
      expect((await getJson(s.url, "api/pools", { cookie })).status).toBe(200);
      // A cookie alone does not make a change: the CSRF token is needed too.
      expect((await postAction(s.url, "pause", { pool: "jobs" }, { cookie })).status).toBe(403);
      const csrf = await csrfOf(s.url, { cookie });
      expect((await postAction(s.url, "pause", { pool: "jobs" }, { cookie, "x-workpool-csrf": csrf })).status).toBe(200);
    });

    test("auth by function: the app's own check decides", async () => {
      const { s } = await setUp({
        auth: (req: { headers: Record<string, unknown> }) => Promise.resolve(req.headers["x-app-user"] === "ops"),
      });
      expect((await fetch(new URL("api/pools", s.url))).status).toBe(401);
      expect((await getJson(s.url, "api/pools", { "x-app-user": "ops" })).status).toBe(200);
    });

    test("without auth, a request that arrives on a non-loopback address is refused; with auth it is served", async () => {
      const address = outsideAddress();
      const { s } = await setUp({}, "0.0.0.0");
      const outside = s.url.replace("0.0.0.0", address);
      const res = await fetch(new URL("api/pools", outside));
      expect(res.status).toBe(403);
      expect(await res.text()).toContain("pass `auth`");
      const loopback = s.url.replace("0.0.0.0", "127.0.0.1");
      expect((await fetch(new URL("api/pools", loopback))).status).toBe(200);
      expect((await fetch(new URL("api/pools", loopback.replace("127.0.0.1", "localhost")))).status).toBe(200);
      // A page elsewhere whose name was pointed at 127.0.0.1 (DNS rebinding) sends its own Host.
      const rebound = await rawGet(new URL("api/pools", loopback), "attacker.example");
      expect(rebound.status).toBe(403);
      expect(rebound.body).toContain("loopback host name");
      const withAuth = await serveDashboard({ store: (await ctx()).h.store, auth: TOKEN }, "0.0.0.0");
      served.push(withAuth);
      const authed = await fetch(new URL("api/pools", withAuth.url.replace("0.0.0.0", address)), {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(authed.status).toBe(200);
    });

    test("basePath: served under it only; bad options are refused naming the option", async () => {
      const { s } = await setUp({ basePath: "/ops/workpool" });
      expect(s.url).toMatch(/\/ops\/workpool\/$/);
      expect((await getJson(s.url, "api/pools")).status).toBe(200);
      expect((await fetch(new URL("/api/pools", s.url))).status).toBe(404);
      const bare = await fetch(s.url.slice(0, -1), { redirect: "manual" });
      expect(bare.status).toBe(308);
      expect(bare.headers.get("location")).toBe("/ops/workpool/");
      const store = (await ctx()).h.store;
      expect(() => dashboardHandler({ store, basePath: "ops" })).toThrow(InvalidArgumentError);
      expect(() => dashboardHandler({ store, basePath: "/a b" })).toThrow(/basePath/);
      expect(() => dashboardHandler({ store, auth: "short" })).toThrow(/auth: must be a token of 16 to 1000/);
      expect(() => dashboardHandler({ store, readOnly: "yes" as unknown as boolean })).toThrow(/readOnly/);
      expect(() => dashboardHandler({ store, port: 1 } as never)).toThrow(/port: is not an option of dashboardHandler\(\)/);
      expect(() => dashboardHandler({ store: {} })).toThrow(/store/);
    });
  });
  defineDashboardChartTests(harness);
}
