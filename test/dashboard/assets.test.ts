/**
 * The browser app the handler serves is the one `npm run build` made (dist/dashboard/ui),
 * also when the handler runs from the source tree, where src/dashboard/ui holds the app's
 * unbuilt source: the page names only built files, and each of them is served.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import type { Store } from "../../src/index.js";
import { requireBuild } from "../helpers/child.js";
import { serveDashboard, type ServedDashboard } from "../helpers/dashboard.js";
import { openTestStore, type SqliteTestStore } from "../helpers/stores.js";

let opened: SqliteTestStore | undefined;
let store: Store<unknown>;
let dash: ServedDashboard;

beforeAll(async () => {
  requireBuild();
  opened = await openTestStore("sqlite", { prefix: "workpool-assets-" });
  store = opened.store as unknown as Store<unknown>;
  dash = await serveDashboard({ store });
});

afterAll(async () => {
  await dash?.close();
  await opened?.cleanup();
});

test("the page is the built app: its script and stylesheet are served, and it names no source file", async () => {
  const page = await fetch(dash.url);
  expect(page.status).toBe(200);
  const html = await page.text();
  const linked = [...html.matchAll(/(?:src|href)="\.\/([^"]+)"/g)].map((m) => m[1]!);
  expect(linked.filter((path) => !/^assets\/[\w-]+\.(js|css)$/.test(path))).toEqual([]);
  expect(linked.filter((path) => path.endsWith(".js"))).toHaveLength(1);
  expect(linked.filter((path) => path.endsWith(".css"))).toHaveLength(1);
  for (const path of linked) {
    const res = await fetch(new URL(path, dash.url));
    expect(res.status, path).toBe(200);
    expect(res.headers.get("content-type"), path).toMatch(path.endsWith(".js") ? /^text\/javascript/ : /^text\/css/);
  }
});
