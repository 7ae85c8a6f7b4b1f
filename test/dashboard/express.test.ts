/**
 * The dashboard mounted in Express as docs/dashboard.md shows: under a mount path (which
 * Express strips from req.url), behind a JSON body parser that reads POST bodies first.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, expect, test } from "vitest";
import { workpoolAdmin } from "../../src/admin/index.js";
import { dashboardHandler, type DashboardHandler } from "../../src/dashboard/index.js";
import { Workpool, type Store } from "../../src/index.js";
import { quietLogger } from "../helpers/common.js";
import { csrfOf, getJson, postAction } from "../helpers/dashboard.js";
import { openTestStore, type SqliteTestStore } from "../helpers/stores.js";

let opened: SqliteTestStore | undefined;
let store: Store<unknown>;
let handler: DashboardHandler;
let server: Server;
let base: string;

beforeAll(async () => {
  opened = await openTestStore("sqlite", { prefix: "workpool-express-" });
  store = opened.store as unknown as Store<unknown>;
  const pool = new Workpool(store, { name: "jobs", logger: quietLogger });
  await pool.enqueueAction(
    pool.defineAction("job", () => 1),
    {},
  );
  await pool.stop();
  handler = dashboardHandler({ store, basePath: "/ops/workpool" });
  const app = express();
  app.use(express.json());
  app.use("/ops/workpool", handler);
  server = app.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ops/workpool/`;
});

afterAll(async () => {
  handler?.close();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await opened?.cleanup();
});

test("Express: the page, the reads and an action work under the mount path, after express.json()", async () => {
  const page = await fetch(base);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('<div id="app">');
  expect(((await getJson(base, "api/pools")).body as { pools: { name: string }[] }).pools.map((p) => p.name)).toEqual(["jobs"]);
  const csrf = await csrfOf(base);
  expect(await postAction(base, "set-parallelism", { pool: "jobs", n: 4 }, { "x-workpool-csrf": csrf })).toEqual({
    status: 200,
    body: { done: true },
  });
  expect((await workpoolAdmin(store).pools())[0]!.maxParallelism).toBe(4);
  expect((await postAction(base, "set-parallelism", { pool: "jobs", n: 4, x: 1 }, { "x-workpool-csrf": csrf })).status).toBe(400);
});
