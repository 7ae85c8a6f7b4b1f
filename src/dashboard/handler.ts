/**
 * dashboardHandler(): the dashboard as a Node `(req, res)` handler. It serves the built
 * browser app and its JSON API under `basePath`, and guards both: loopback only unless
 * `auth` is set, every change a POST carrying the CSRF token, `readOnly` refusing changes,
 * and headers (CSP without inline scripts, nosniff, no framing) on every answer.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { workpoolAdmin } from "../admin/admin.js";
import { systemClock } from "../clock.js";
import { DRIVER, type Store } from "../driver/driver.js";
import { InvalidArgumentError, UnknownWorkError } from "../errors.js";
import { actionEndpoint, readEndpoint, type ApiAnswer } from "./api.js";
import { appAssets } from "./assets.js";
import { checkDashboardOptions, isLoopback, type CheckedDashboardOptions, type DashboardOptions } from "./options.js";
import { Sampler } from "./sampler.js";

/** A Node request handler serving the dashboard; close() stops its chart sampling. */
export interface DashboardHandler {
  (req: IncomingMessage, res: ServerResponse): void;
  /** Stops the once-a-second sampling behind the live chart (it also stops by itself when nobody watches). */
  close(): void;
}

/** The cookie that keeps a token given as `?token=`. */
export const TOKEN_COOKIE = "workpool_dashboard_token";
/** The header a POST carries the CSRF token in. */
export const CSRF_HEADER = "x-workpool-csrf";
const MAX_BODY = 64 * 1024;

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

function send(res: ServerResponse, status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}): void {
  res.writeHead(status, {
    "content-type": type,
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    ...extra,
  });
  res.end(body);
}

function sendJson(res: ServerResponse, answer: ApiAnswer): void {
  send(res, answer.status, "application/json; charset=utf-8", JSON.stringify(answer.body));
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function cookie(req: IncomingMessage, name: string): string | null {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return decodeURIComponent(v.join("="));
  }
  return null;
}

/** The name in a Host header, without its port. */
function hostName(host: string): string {
  return host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d+$/, "");
}

/** The token a request presents: Authorization: Bearer, else the cookie. */
function presentedToken(req: IncomingMessage): string | null {
  const header = req.headers.authorization;
  if (header?.startsWith("Bearer ")) return header.slice(7);
  return cookie(req, TOKEN_COOKIE);
}

/** The JSON body of a POST (or what a body parser mounted before us already read). */
async function readBody(req: IncomingMessage): Promise<unknown> {
  const parsed = (req as { body?: unknown }).body;
  if (req.readableEnded && parsed !== undefined) return parsed;
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new InvalidArgumentError("body", `must be at most ${MAX_BODY} bytes of JSON`);
    chunks.push(chunk);
  }
  const raw = Buffer.concat(chunks).toString("utf8");
  try {
    return raw === "" ? {} : (JSON.parse(raw) as unknown);
  } catch {
    throw new InvalidArgumentError("body", "must be a JSON object");
  }
}

/** The host of an Origin header, or null when it names none ("null", or malformed). */
function originHost(origin: string): string | null {
  try {
    return new URL(origin).host || null;
  } catch {
    return null;
  }
}

/** Why a POST may not change anything (CSRF, readOnly, content type), or null when it may. */
function refusePost(o: CheckedDashboardOptions, csrf: string, req: IncomingMessage): ApiAnswer | null {
  if (o.readOnly) return { status: 403, body: { error: "this dashboard is read-only" } };
  const token = req.headers[CSRF_HEADER];
  if (typeof token !== "string" || !sameText(token, csrf)) return { status: 403, body: { error: "missing or wrong CSRF token" } };
  const origin = req.headers.origin;
  if (origin !== undefined && originHost(origin) !== req.headers.host) {
    return { status: 403, body: { error: "cross-origin request refused" } };
  }
  if (!(req.headers["content-type"] ?? "").startsWith("application/json")) {
    return { status: 415, body: { error: "content-type must be application/json" } };
  }
  return null;
}

function errorAnswer(e: unknown): ApiAnswer {
  if (e instanceof InvalidArgumentError) return { status: 400, body: { error: e.message.replace(/^workpool: /, ""), field: e.field } };
  if (e instanceof UnknownWorkError) return { status: 404, body: { error: e.message.replace(/^workpool: /, "") } };
  console.error("workpool: the dashboard could not answer", e);
  return { status: 500, body: { error: e instanceof Error ? e.message.replace(/^workpool: /, "") : "internal error" } };
}

/**
 * The dashboard over `options.store`, as a Node request handler to mount at
 * `options.basePath` (see docs/dashboard.md for node:http, Express, Fastify and Hono).
 */
export function dashboardHandler(options: DashboardOptions): DashboardHandler {
  const o = checkDashboardOptions(options);
  const clock = o.clock ?? systemClock;
  const admin = workpoolAdmin(options.store, o.clock === undefined ? undefined : { clock });
  const driver = (options.store as Store<unknown>)[DRIVER];
  const sampler = new Sampler(driver, clock, (e) => console.error("workpool: the dashboard's chart could not read the store", e));
  const csrf = randomBytes(32).toString("base64url");

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Express strips its mount path from req.url and keeps the whole path in originalUrl.
    const url = new URL((req as { originalUrl?: string }).originalUrl ?? req.url ?? "/", "http://dashboard.invalid");
    if (!url.pathname.startsWith(o.basePath + "/") && url.pathname !== o.basePath) return send(res, 404, "text/plain", "not found\n");
    const path = url.pathname.slice(o.basePath.length);
    if (o.auth === null && !isLoopback(req.socket.localAddress ?? "")) {
      return send(res, 403, "text/plain", "this dashboard has no auth and answers only on a loopback address: pass `auth` to expose it\n");
    }
    // Without auth, a page on another site that re-points its name at 127.0.0.1 (DNS rebinding) must not be let in.
    if (o.auth === null && !isLoopback(hostName(req.headers.host ?? ""))) {
      return send(
        res,
        403,
        "text/plain",
        "this dashboard has no auth and answers only to a loopback host name such as localhost or 127.0.0.1\n",
      );
    }
    if (typeof o.auth === "string") {
      const given = url.searchParams.get("token");
      if (given !== null && req.method === "GET" && sameText(given, o.auth)) {
        // Keep the token in an HttpOnly cookie and drop it from the address bar and history.
        const secure = (req.socket as { encrypted?: boolean }).encrypted ? "; Secure" : "";
        url.searchParams.delete("token");
        return send(res, 303, "text/plain", "", {
          location: `${o.basePath}/${url.search}`,
          "set-cookie": `${TOKEN_COOKIE}=${encodeURIComponent(o.auth)}; Path=${o.basePath || "/"}; HttpOnly; SameSite=Strict${secure}`,
        });
      }
      const token = presentedToken(req);
      if (token === null || !sameText(token, o.auth)) {
        return send(res, 401, "text/plain", "unauthorized: open the dashboard's address with ?token=<your token>\n");
      }
    } else if (o.auth !== null && !(await o.auth(req))) {
      return send(res, 401, "text/plain", "unauthorized\n");
    }
    if (path === "") return send(res, 308, "text/plain", "", { location: `${o.basePath}/${url.search}` });

    if (path.startsWith("/api/")) {
      const name = path.slice(5);
      let answer: ApiAnswer | null;
      try {
        if (req.method === "GET" && name === "session") answer = { status: 200, body: { csrf, readOnly: o.readOnly } };
        else if (req.method === "GET") answer = await (readEndpoint(admin, sampler, name, url.searchParams) ?? null);
        else if (req.method === "POST" && name.startsWith("action/")) {
          answer = refusePost(o, csrf, req) ?? (await (actionEndpoint(admin, name.slice(7), await readBody(req)) ?? null));
        } else answer = { status: 405, body: { error: "GET for reads, POST to api/action/… for changes" } };
      } catch (e) {
        answer = errorAnswer(e);
      }
      return sendJson(res, answer ?? { status: 404, body: { error: `no endpoint api/${name}` } });
    }
    if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, "text/plain", "method not allowed\n");
    const asset = appAssets().get(path === "/" ? "index.html" : path.slice(1));
    if (!asset) return send(res, 404, "text/plain", "not found\n");
    // Built file names carry a content hash: they can be cached for good.
    send(res, 200, asset.type, asset.body, path.startsWith("/assets/") ? { "cache-control": "public, max-age=31536000, immutable" } : {});
  }

  const handler = ((req: IncomingMessage, res: ServerResponse) => {
    serve(req, res).catch((e: unknown) => {
      if (!res.headersSent) sendJson(res, errorAnswer(e));
      else res.destroy();
    });
  }) as DashboardHandler;
  handler.close = () => sampler.stop();
  return handler;
}
