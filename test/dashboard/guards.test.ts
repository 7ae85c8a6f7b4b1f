/**
 * The dashboard's guards against a hostile client, on a real server over a real SQLite
 * store: the Host header read strictly (no loopback look-alikes without auth), basePath
 * checked when the handler is made, and no exception's text sent to a client (a throwing
 * auth function, a forged cookie, a failing store): a bare 500, logged once on the server.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { InvalidArgumentError, Workpool, type Store } from "../../src/index.js";
import { dashboardHandler, TOKEN_COOKIE, type DashboardOptions } from "../../src/dashboard/index.js";
import { withDriver } from "../conformance/context.js";
import { CapturingLogger, quietLogger } from "../helpers/common.js";
import { csrfOf, getJson, postAction, rawRequest, serveDashboard, type ServedDashboard } from "../helpers/dashboard.js";
import { openTestStore, type SqliteTestStore } from "../helpers/stores.js";

const TOKEN = "guards-test-token-0123456789";
const SECRET = "postgres://admin:hunter2@db.internal:5432/prod";

let opened: SqliteTestStore | undefined;
let store: Store<unknown>;
const served: ServedDashboard[] = [];

beforeAll(async () => {
  opened = await openTestStore("sqlite", { prefix: "workpool-guards-" });
  store = opened.store as unknown as Store<unknown>;
  const pool = new Workpool(store, { name: "jobs", logger: quietLogger });
  await pool.enqueueAction(
    pool.defineAction("job", () => 1),
    {},
  );
  await pool.stop();
});

afterEach(async () => {
  for (const s of served.splice(0)) await s.close();
});

afterAll(async () => {
  await opened?.cleanup();
});

async function serve(options: Omit<DashboardOptions, "store"> & { store?: unknown } = {}): Promise<ServedDashboard> {
  const s = await serveDashboard({ store, ...options });
  served.push(s);
  return s;
}

/** A GET of api/pools with exactly this Host header line (or none). */
function withHost(s: ServedDashboard, host: string | null): Promise<{ status: number; body: string }> {
  const path = new URL("api/pools", s.url).pathname;
  return rawRequest(s.url, `GET ${path} HTTP/1.1${host === null ? "" : `\r\nHost: ${host}`}`);
}

describe("Host header without auth", () => {
  test("loopback names, with or without a port, are served", async () => {
    const s = await serve();
    const port = new URL(s.url).port;
    for (const host of [
      "localhost",
      `localhost:${port}`,
      "LOCALHOST",
      "127.0.0.1",
      `127.0.0.1:${port}`,
      "127.9.9.9",
      "[::1]",
      `[::1]:${port}`,
    ]) {
      expect({ host, status: (await withHost(s, host)).status }).toEqual({ host, status: 200 });
    }
    expect((await withHost(s, "[0:0:0:0:0:0:0:1]:80")).status).toBe(200);
    expect((await withHost(s, "app.localhost")).status).toBe(200);
  });

  test("look-alikes and malformed headers are refused", async () => {
    const s = await serve();
    const hostile = [
      "[::1].evil.com",
      "[::1]:80@evil",
      "[::1]evil",
      "[::1]:80:80",
      "[::1",
      "::1",
      "localhost.evil.com",
      "localhost@evil.com",
      "evil.com@localhost",
      "localhost:80@evil.com",
      "localhost:99999",
      "localhost:",
      "localhost:80x",
      "localhost/evil",
      "127.0.0.1.nip.io",
      "127.0.0.1:80.evil.com",
      "127.1",
      "2130706433",
      "0.0.0.0",
      "evil.com",
      "localhost..evil",
      "",
      " ",
    ];
    for (const host of hostile) {
      const res = await withHost(s, host);
      expect({ host, status: res.status }).toEqual({ host, status: 403 });
    }
    // HTTP/1.0 may leave the header out.
    const none = await rawRequest(s.url, `GET ${new URL("api/pools", s.url).pathname} HTTP/1.0`);
    expect(none.status).toBe(403);
    expect(none.body).toContain("loopback host name");
  });
});

describe("basePath", () => {
  test("paths with . or .. segments, empty segments, query or fragment characters, or other characters are refused", () => {
    for (const basePath of [
      "/a/../b",
      "/..",
      "/.",
      "/a/./b",
      "//",
      "/a//b",
      "//a",
      "/a?b",
      "/a#b",
      "/a%2Fb",
      "/a b",
      "/ä",
      "a",
      "/a\\b",
      "/".repeat(1) + "x".repeat(200),
    ]) {
      expect(() => dashboardHandler({ store, basePath }), basePath).toThrow(InvalidArgumentError);
    }
    expect(() => dashboardHandler({ store, basePath: "/a/../b" })).toThrow(
      /basePath: must be "" or a path like "\/admin\/workpool" .*none of them "\." or "\.\."/,
    );
    for (const basePath of ["", "/", "/ops", "/ops/", "/ops/work.pool", "/a/..b/c", "/~x/-y_z"]) {
      expect(() => dashboardHandler({ store, basePath }).close(), basePath).not.toThrow();
    }
  });

  test("a path with dots that are not a whole segment is served under itself", async () => {
    const s = await serve({ basePath: "/a/..b" });
    expect(s.url).toMatch(/\/a\/\.\.b\/$/);
    expect((await getJson(s.url, "api/pools")).status).toBe(200);
  });
});

describe("no exception's text reaches a client", () => {
  test("an auth function that throws: a bare 500, the error logged once on the server", async () => {
    for (const thrown of [new Error(`cannot reach ${SECRET}`), new InvalidArgumentError("session", SECRET)]) {
      const logger = new CapturingLogger();
      const s = await serve({
        logger,
        auth: () => {
          throw thrown;
        },
      });
      const res = await fetch(new URL("api/pools?token=abc", s.url));
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ error: "internal error (the server's log has the details)" });
      expect(text).not.toContain("hunter2");
      expect(text).not.toContain("at ");
      expect(logger.lines).toHaveLength(1);
      expect(logger.lines[0]).toMatchObject({ level: "error", fields: { err: thrown, method: "GET", path: "/api/pools" } });
    }
  });

  test("an auth function's answer lets a request in only when it is true", async () => {
    const answers: unknown[] = [false, undefined, "yes", 1, {}];
    let answer: unknown;
    const s = await serve({ auth: () => answer as boolean });
    for (answer of answers) expect((await fetch(new URL("api/pools", s.url))).status).toBe(401);
    answer = true;
    expect((await fetch(new URL("api/pools", s.url))).status).toBe(200);
  });

  test("a malformed token cookie is 401, not a 500, and logs nothing", async () => {
    const logger = new CapturingLogger();
    const s = await serve({ auth: TOKEN, logger });
    for (const value of ["%E0%A4%A", "%", "%zz", `${TOKEN}%`]) {
      const res = await fetch(new URL("api/pools", s.url), { headers: { cookie: `${TOKEN_COOKIE}=${value}` } });
      expect(res.status).toBe(401);
      expect(await res.text()).toContain("unauthorized");
    }
    expect((await fetch(new URL("api/pools", s.url), { headers: { cookie: `${TOKEN_COOKIE}=${encodeURIComponent(TOKEN)}` } })).status).toBe(
      200,
    );
    expect(logger.lines).toEqual([]);
  });

  test("a store that fails: reads and actions answer a bare 500 and log the error, with the path but not the query", async () => {
    const logger = new CapturingLogger();
    const failing = withDriver(store, {
      readPools: () => Promise.reject(new Error(`connect ECONNREFUSED ${SECRET}`)),
      changePoolLimit: () => Promise.reject(new Error(`permission denied for ${SECRET}`)),
    });
    const s = await serve({ store: failing, auth: TOKEN, logger });
    const bearer = { authorization: `Bearer ${TOKEN}` };
    const read = await getJson(s.url, "api/pools?token=a-query-the-log-leaves-out", bearer);
    expect(read).toEqual({ status: 500, body: { error: "internal error (the server's log has the details)" } });
    const csrf = await csrfOf(s.url, bearer);
    const action = await postAction(s.url, "pause", { pool: "jobs" }, { ...bearer, "x-workpool-csrf": csrf });
    expect(action).toEqual({
      status: 500,
      body: { error: "internal error (the server's log has the details); the action may have been partly done" },
    });
    expect(logger.lines.map((l) => [l.fields.method, l.fields.path, (l.fields.err as Error).message])).toEqual([
      ["GET", "/api/pools", `connect ECONNREFUSED ${SECRET}`],
      ["POST", "/api/action/pause", `permission denied for ${SECRET}`],
    ]);
    expect(JSON.stringify(logger.lines.map((l) => l.fields))).not.toContain("a-query-the-log-leaves-out");
  });

  test("a request target that is not a URL path is a 400; '//host/…' is a path, not another host", async () => {
    const s = await serve();
    expect((await rawRequest(s.url, "GET http://[ HTTP/1.1\r\nHost: localhost")).status).toBe(400);
    expect((await rawRequest(s.url, "GET //evil.example/api/pools HTTP/1.1\r\nHost: localhost")).status).toBe(404);
  });

  test("a logger without an error method is refused", () => {
    expect(() => dashboardHandler({ store, logger: {} as never })).toThrow(/logger: must have an error\(fields, message\) method/);
  });
});
