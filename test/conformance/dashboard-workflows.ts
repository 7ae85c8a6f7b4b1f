/**
 * The dashboard's workflow endpoints on a real server over each store: the run list, counts
 * and a run's detail answer what the admin API gives; a query value that is not what its
 * field takes is a 400 naming the field; cancel is refused without the CSRF token, in
 * readOnly and for a malformed body, before anything changes, as are restart, fork, skip
 * and send-event (an unknown run a 404, a run in the wrong state a 400); a failing store is a bare
 * 500 with the error logged.
 */
import { afterEach, describe, expect, test } from "vitest";
import { workpoolAdmin } from "../../src/admin/index.js";
import type { Driver } from "../../src/driver/driver.js";
import { csrfOf, getJson, postAction, serveDashboard, type ServedDashboard } from "../helpers/dashboard.js";
import type { StoreHarness } from "./harness.js";
import { CapturingLogger, T0, useTestContext, withDriver } from "./context.js";
import { drain, workflowPool } from "./workflow-kit.js";

const INTERNAL = "internal error (the server's log has the details)";

export function defineDashboardWorkflowTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("dashboard: workflow endpoints", () => {
    const ctx = useTestContext(harness);
    const served: ServedDashboard[] = [];
    afterEach(async () => {
      for (const s of served.splice(0)) await s.close();
    });

    /** Runs of "order": one waiting for an event (with a child run done), one failed; a second apart. */
    async function setUp(options: Record<string, unknown> = {}) {
      const t = await ctx();
      const { pool, wf } = workflowPool(t);
      const ok = pool.defineAction("ok", (_c, n: number) => n);
      const fail = pool.defineAction("fail", () => {
        throw new Error("<img src=x onerror=alert(1)>");
      });
      const child = wf.define("child", async (step, n: number) => step.runAction(ok, n));
      const order = wf.define("order", async (step, mode: string) => {
        if (mode === "fail") return step.runAction(fail, null, { retry: false });
        await step.runWorkflow(child, 1);
        await step.runAction(ok, 2);
        return step.awaitEvent("go");
      });
      await wf.start(order, "wait", { workflowId: "o-wait" });
      t.clock.advance(1000);
      await wf.start(order, "fail", { workflowId: "o-fail" });
      await drain(pool);
      await wf.sendEvent("o-wait", "note", { html: "</script><b>x</b>" });
      const s = await serveDashboard({ store: t.h.store, clock: t.clock, ...options });
      served.push(s);
      return { t, s, pool, wf, admin: workpoolAdmin(t.h.store, { clock: t.clock }) };
    }

    /** The value as it comes out of JSON (undefined fields dropped). */
    const asJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

    test("reads: the run list with filters and keyset pages, counts, and a run's detail with journal pages", async () => {
      const { s, admin } = await setUp();
      expect(await getJson(s.url, "api/workflows")).toEqual({ status: 200, body: asJson(await admin.workflows()) });
      const first = await getJson(s.url, "api/workflows?name=order&limit=1");
      const page = first.body as { items: { workflowId: string }[]; cursor: string };
      expect(page.items.map((r) => r.workflowId)).toEqual(["o-fail"]);
      const next = await getJson(s.url, `api/workflows?name=order&limit=1&cursor=${page.cursor}`);
      expect(next.body).toMatchObject({ items: [{ workflowId: "o-wait" }], cursor: null });
      const failed = await getJson(s.url, "api/workflows?state=failed&pool=&version=");
      expect((failed.body as { items: { workflowId: string }[] }).items.map((r) => r.workflowId)).toEqual(["o-fail"]);
      const early = await getJson(s.url, `api/workflows?name=order&createdAfter=${T0}&createdBefore=${T0 + 1000}`);
      expect((early.body as { items: { workflowId: string }[] }).items.map((r) => r.workflowId)).toEqual(["o-wait"]);
      const children = await getJson(s.url, "api/workflows?parentId=o-wait");
      expect((children.body as { items: { name: string }[] }).items.map((r) => r.name)).toEqual(["child"]);

      expect(await getJson(s.url, "api/workflow-counts")).toEqual({ status: 200, body: { counts: await admin.workflowCounts() } });
      expect(await getJson(s.url, "api/workflow-counts?pool=other")).toEqual({ status: 200, body: { counts: [] } });
      const versions = await getJson(s.url, "api/workflow-versions");
      expect(versions).toEqual({ status: 200, body: { versions: await admin.workflowVersions() } });
      expect((versions.body as { versions: unknown[] }).versions).toContainEqual(
        expect.objectContaining({ name: "order", version: null, unfinishedRuns: 1 }),
      );
      expect(await getJson(s.url, "api/workflow-versions?pool=other")).toEqual({ status: 200, body: { versions: [] } });

      const run = await getJson(s.url, "api/workflow-run?id=o-wait");
      expect(run).toEqual({ status: 200, body: asJson(await admin.workflowRun("o-wait")) });
      expect(run.body).toMatchObject({ events: [{ name: "note", payload: { html: "</script><b>x</b>" }, consumedStep: null }] });
      const part = await getJson(s.url, "api/workflow-run?id=o-wait&stepsFrom=1&stepsLimit=1");
      expect(part.body).toMatchObject({ steps: [{ n: 1, kind: "action", name: "ok" }], nextStep: 2 });
      const fail = await getJson(s.url, "api/workflow-run?id=o-fail");
      expect((fail.body as { run: { error: string } }).run.error).toContain("<img src=x onerror=alert(1)>");
      expect(await getJson(s.url, "api/workflow-run?id=no-such-run")).toEqual({
        status: 404,
        body: { error: "no workflow run with this id" },
      });
    });

    test("a query value that is not what its field takes is a 400 naming the field", async () => {
      const { s } = await setUp();
      const cases: [string, string][] = [
        ["api/workflows?state=sleeping", "state"],
        ["api/workflows?limit=0", "limit"],
        ["api/workflows?limit=501", "limit"],
        ["api/workflows?limit=ten", "limit"],
        ["api/workflows?limit=1.5", "limit"],
        ["api/workflows?createdAfter=yesterday", "createdAfter"],
        ["api/workflows?createdBefore=-5", "createdBefore"],
        [`api/workflows?createdAfter=${T0}&createdBefore=${T0}`, "createdBefore"],
        ["api/workflows?cursor=not-a-cursor", "cursor"],
        ["api/workflows?parentId=%3Cscript%3E", "parentId"],
        ["api/workflows?name=a%20b", "name"],
        ["api/workflows?pool=%00", "pool"],
        ["api/workflow-versions?pool=%00", "pool"],
        ["api/workflow-run", "id"],
        ["api/workflow-run?id=a%20b", "id"],
        ["api/workflow-run?id=o-wait&stepsFrom=-1", "stepsFrom"],
        ["api/workflow-run?id=o-wait&stepsLimit=1001", "stepsLimit"],
        ["api/workflow-run?id=o-wait&stepsLimit=0", "stepsLimit"],
      ];
      for (const [path, field] of cases) {
        const answer = await getJson(s.url, path);
        expect({ path, ...answer }).toMatchObject({ path, status: 400, body: { field, error: expect.stringContaining(`${field}:`) } });
      }
      expect(await getJson(s.url, "api/workflows?limit=abc")).toMatchObject({
        body: { error: 'limit: must be an integer from 1 to 500, got "abc"' },
      });
    });

    test("cancel: refused without CSRF, in readOnly and for a malformed body, before anything changes; then done once", async () => {
      const { t, s, pool, admin } = await setUp();
      const csrf = await csrfOf(s.url);
      expect((await postAction(s.url, "workflow-cancel", { id: "o-wait" })).status).toBe(403);
      expect((await postAction(s.url, "workflow-cancel", { id: "o-wait" }, { "x-workpool-csrf": "wrong" })).status).toBe(403);
      const crossSite = await postAction(
        s.url,
        "workflow-cancel",
        { id: "o-wait" },
        { "x-workpool-csrf": csrf, origin: "http://evil.example" },
      );
      expect(crossSite.status).toBe(403);
      const ok = { "x-workpool-csrf": csrf };
      const post = (body: unknown) => postAction(s.url, "workflow-cancel", body, ok);
      expect(await post({})).toMatchObject({ status: 400, body: { field: "id" } });
      expect(await post({ id: "o wait" })).toMatchObject({ status: 400, body: { field: "id" } });
      expect(await post({ id: "o-wait", cascade: false })).toMatchObject({ status: 400, body: { field: "body.cascade" } });
      expect(await post(["o-wait"])).toMatchObject({ status: 400, body: { field: "body" } });
      const readOnly = await serveDashboard({ store: t.h.store, clock: t.clock, readOnly: true });
      served.push(readOnly);
      const refused = await postAction(
        readOnly.url,
        "workflow-cancel",
        { id: "o-wait" },
        { "x-workpool-csrf": await csrfOf(readOnly.url) },
      );
      expect(refused).toEqual({ status: 403, body: { error: "this dashboard is read-only" } });
      await drain(pool);
      expect(await admin.workflow("o-wait")).toMatchObject({ state: "running", cancelRequested: false });

      expect(await post({ id: "no-such-run" })).toEqual({ status: 404, body: { error: "no workflow run with this id" } });
      expect(await post({ id: "o-wait" })).toEqual({ status: 200, body: { canceled: true } });
      await drain(pool);
      expect(await admin.workflow("o-wait")).toMatchObject({ state: "canceled" });
      expect(await post({ id: "o-wait" })).toEqual({ status: 200, body: { canceled: false, reason: "it already ended (canceled)" } });
      expect(await post({ id: "o-fail" })).toEqual({ status: 200, body: { canceled: false, reason: "it already ended (failed)" } });
    });

    test("restart, fork, skip and send-event: refused without CSRF and for malformed bodies, naming the field; then done", async () => {
      const { s, pool, admin } = await setUp();
      const csrf = await csrfOf(s.url);
      const ok = { "x-workpool-csrf": csrf };
      const post = (name: string, body: unknown) => postAction(s.url, `workflow-${name}`, body, ok);
      const actions: [string, Record<string, unknown>][] = [
        ["restart", { id: "o-fail", from: 0 }],
        ["fork", { id: "o-fail", from: 0 }],
        ["skip", { id: "o-fail" }],
        ["send-event", { id: "o-wait", name: "go" }],
      ];
      for (const [name, body] of actions) {
        expect({ name, ...(await postAction(s.url, `workflow-${name}`, body)) }).toMatchObject({ name, status: 403 });
        const other = await postAction(s.url, `workflow-${name}`, body, { ...ok, origin: "http://evil.example" });
        expect({ name, ...other }).toMatchObject({ name, status: 403 });
        expect({ name, ...(await post(name, { ...body, extra: 1 })) }).toMatchObject({ name, status: 400, body: { field: "body.extra" } });
        expect({ name, ...(await post(name, { ...body, id: "no-such-run" })) }).toEqual({
          name,
          status: 404,
          body: { error: "no workflow run with this id" },
        });
      }
      const bad: [string, unknown, string][] = [
        ["restart", { id: "o-fail" }, "from"],
        ["restart", { id: "o-fail", from: -1 }, "from"],
        ["restart", { id: "o-fail", from: "0" }, "from"],
        ["restart", { id: "o fail", from: 0 }, "id"],
        ["fork", { id: "o-fail", from: 1.5 }, "from"],
        ["fork", { id: "o-fail", from: 0, workflowId: "<b>" }, "workflowId"],
        ["fork", { id: "o-fail", from: 0, workflowId: "o-wait" }, "workflowId"],
        ["skip", {}, "id"],
        ["send-event", { id: "o-wait" }, "name"],
        ["send-event", { id: "o-wait", name: "a b" }, "name"],
        ["send-event", { id: "o-wait", name: "go", payload: "x".repeat(70_000) }, "body"],
        ["restart", null, "body"],
      ];
      for (const [name, sent, field] of bad) {
        expect({ name, sent, ...(await post(name, sent)) }).toMatchObject({ name, sent, status: 400, body: { field } });
      }
      // A run in a state the action does not take: a 400 with the admin's reason.
      expect(await post("restart", { id: "o-wait", from: 0 })).toMatchObject({
        status: 400,
        body: { field: "id", error: expect.stringContaining("only failed, canceled or blocked runs can be restarted") },
      });
      expect(await post("skip", { id: "o-fail" })).toMatchObject({
        status: 400,
        body: { field: "id", error: expect.stringContaining("only a blocked run can skip") },
      });
      expect(await post("send-event", { id: "o-fail", name: "go" })).toMatchObject({ status: 400, body: { field: "id" } });
      await drain(pool);
      expect(await admin.workflow("o-fail")).toMatchObject({ state: "failed" });
      expect((await admin.workflowRun("o-wait"))!.events).toHaveLength(1);

      expect(await post("send-event", { id: "o-wait", name: "go", payload: { n: 5 } })).toEqual({ status: 200, body: { sent: true } });
      await drain(pool);
      expect(await admin.workflowRun("o-wait")).toMatchObject({ run: { state: "success", result: { kind: "event", value: { n: 5 } } } });
      const fork = await post("fork", { id: "o-wait", from: 2, workflowId: "o-fork" });
      expect(fork).toEqual({ status: 200, body: { newId: "o-fork" } });
      expect((await admin.workflowRun("o-fork"))!.steps.map((e) => e.n)).toEqual([0, 1]);
      expect(await post("restart", { id: "o-fail", from: 0 })).toEqual({ status: 200, body: { done: true } });
      expect(await admin.workflow("o-fail")).toMatchObject({ state: "running" });
    });

    test("with auth set, the workflow reads and actions need the token", async () => {
      const { s, pool, admin } = await setUp({ auth: "workflow-token-0123456789" });
      for (const path of ["api/workflows", "api/workflow-counts", "api/workflow-versions", "api/workflow-run?id=o-wait"]) {
        expect((await fetch(new URL(path, s.url))).status).toBe(401);
      }
      const bearer = { authorization: "Bearer workflow-token-0123456789" };
      expect((await getJson(s.url, "api/workflow-run?id=o-wait", bearer)).status).toBe(200);
      const anonymous = await fetch(new URL("api/action/workflow-cancel", s.url), {
        method: "POST",
        headers: { "content-type": "application/json", "x-workpool-csrf": "x" },
        body: JSON.stringify({ id: "o-wait" }),
      });
      expect(anonymous.status).toBe(401);
      const csrf = await csrfOf(s.url, bearer);
      expect(await postAction(s.url, "workflow-cancel", { id: "o-wait" }, { ...bearer, "x-workpool-csrf": csrf })).toEqual({
        status: 200,
        body: { canceled: true },
      });
      await drain(pool);
      expect(await admin.workflow("o-wait")).toMatchObject({ state: "canceled" });
    });

    test("a store that fails: the workflow reads and cancel answer a bare 500 and log the error", async () => {
      const t = await ctx();
      const logger = new CapturingLogger();
      const secret = "postgres://admin:hunter2@db.internal/prod";
      const failing = withDriver(t.h.store, {
        workflows: (real: Driver<Tx>) =>
          Object.create(real.workflows(), {
            listRuns: { value: () => Promise.reject(new Error(`list: ${secret}`)) },
            countRuns: { value: () => Promise.reject(new Error(`count: ${secret}`)) },
            readRun: { value: () => Promise.reject(new Error(`read: ${secret}`)) },
          }) as ReturnType<Driver<Tx>["workflows"]>,
      });
      const s = await serveDashboard({ store: failing, clock: t.clock, logger });
      served.push(s);
      for (const path of ["api/workflows", "api/workflow-counts", "api/workflow-run?id=o-wait"]) {
        expect(await getJson(s.url, path)).toEqual({ status: 500, body: { error: INTERNAL } });
      }
      const cancel = await postAction(s.url, "workflow-cancel", { id: "o-wait" }, { "x-workpool-csrf": await csrfOf(s.url) });
      expect(cancel).toEqual({ status: 500, body: { error: `${INTERNAL}; the action may have been partly done` } });
      expect(logger.lines.map((l) => (l.fields.err as Error).message)).toEqual([
        `list: ${secret}`,
        `count: ${secret}`,
        `read: ${secret}`,
        `read: ${secret}`,
      ]);
    });
  });
}
