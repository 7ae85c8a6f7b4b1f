/**
 * dashboardHandler(): the dashboard as a Node `(req, res)` handler. It serves the built
 * browser app and its JSON API under `basePath`, and guards both: loopback only unless
 * `auth` is set, every change a POST carrying the CSRF token, `readOnly` refusing changes,
 * and headers (CSP without inline scripts, nosniff, no framing) on every answer.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { workpoolAdmin } from "../admin/admin.js";
import { systemClock } from "../clock.js";
import { DRIVER, type Store } from "../driver/driver.js";
import { InvalidArgumentError, UnknownWorkError } from "../errors.js";
import { actionEndpoint, readEndpoint, type ApiAnswer } from "./api.js";
import { appAssets } from "./assets.js";
import { isLoopbackHostHeader } from "./host.js";
import { checkDashboardOptions, isLoopback, type DashboardOptions } from "./options.js";
import { presentedToken, readBody, refusePost, requestUrl, sameText, TOKEN_COOKIE } from "./request.js";
import { Sampler } from "./sampler.js";

/** A Node request handler serving the dashboard; close() stops its chart sampling. */
export interface DashboardHandler {
  (req: IncomingMessage, res: ServerResponse): void;
  /** Stops the once-a-second sampling behind the live chart (it also stops by itself when nobody watches). */
  close(): void;
}

export { CSRF_HEADER, TOKEN_COOKIE } from "./request.js";

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

/** What a client is told of an error the handler did not expect: no message, no stack (they may carry secrets). */
export const INTERNAL_ERROR = "internal error (the server's log has the details)";

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

/**
 * The answer to an error: bad input (400) and unknown work (404) say what was wrong;
 * anything else is logged and a bare 500. An action's 500 says it may have been partly
 * done (cancel-all and purge work in batches).
 */
function errorAnswer(e: unknown, logInternal: (e: unknown) => void, action = false): ApiAnswer {
  if (e instanceof InvalidArgumentError) return { status: 400, body: { error: e.message.replace(/^workpool: /, ""), field: e.field } };
  if (e instanceof UnknownWorkError) return { status: 404, body: { error: e.message.replace(/^workpool: /, "") } };
  logInternal(e);
  return { status: 500, body: { error: action ? `${INTERNAL_ERROR}; the action may have been partly done` : INTERNAL_ERROR } };
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
  const sampler = new Sampler(driver, clock, (err) => o.logger.error({ err }, "workpool: the dashboard's chart could not read the store"));
  const csrf = randomBytes(32).toString("base64url");

  async function serve(req: IncomingMessage, res: ServerResponse, url: URL, logInternal: (e: unknown) => void): Promise<void> {
    if (!url.pathname.startsWith(o.basePath + "/") && url.pathname !== o.basePath) return send(res, 404, "text/plain", "not found\n");
    const path = url.pathname.slice(o.basePath.length);
    if (o.auth === null && !isLoopback(req.socket.localAddress ?? "")) {
      return send(res, 403, "text/plain", "this dashboard has no auth and answers only on a loopback address: pass `auth` to expose it\n");
    }
    // Without auth, a page on another site that re-points its name at 127.0.0.1 (DNS rebinding) must not be let in.
    if (o.auth === null && !isLoopbackHostHeader(req.headers.host)) {
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
    } else if (o.auth !== null) {
      let allowed: unknown;
      try {
        allowed = await o.auth(req);
      } catch (e) {
        // Whatever the app's check threw (even an InvalidArgumentError) is for the server's log, not for an anonymous client.
        logInternal(e);
        return sendJson(res, { status: 500, body: { error: INTERNAL_ERROR } });
      }
      // Only `true` lets a request in: a function that forgot to return, or returned a truthy value by mistake, refuses.
      if (allowed !== true) return send(res, 401, "text/plain", "unauthorized\n");
    }
    if (path === "") return send(res, 308, "text/plain", "", { location: `${o.basePath}/${url.search}` });

    if (path.startsWith("/api/")) {
      const name = path.slice(5);
      let answer: ApiAnswer | null;
      try {
        if (req.method === "GET" && name === "session") answer = { status: 200, body: { csrf, readOnly: o.readOnly } };
        else if (req.method === "GET") answer = await (readEndpoint(admin, sampler, name, url.searchParams) ?? null);
        else if (req.method === "POST" && name.startsWith("action/")) {
          answer = refusePost(o, csrf, req) ?? (await (actionEndpoint(admin, name.slice(7), await readBody(req), logInternal) ?? null));
        } else answer = { status: 405, body: { error: "GET for reads, POST to api/action/… for changes" } };
      } catch (e) {
        answer = errorAnswer(e, logInternal, req.method === "POST");
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
    const url = requestUrl(req);
    if (url === null) return send(res, 400, "text/plain", "bad request: the request target is not a URL path\n");
    // Logged with the path only: the query may hold the token.
    const logInternal = (err: unknown): void => {
      o.logger.error({ err, method: req.method, path: url.pathname }, "workpool: the dashboard could not answer a request");
    };
    serve(req, res, url, logInternal).catch((e: unknown) => {
      if (!res.headersSent) sendJson(res, errorAnswer(e, logInternal));
      else res.destroy();
    });
  }) as DashboardHandler;
  handler.close = () => sampler.stop();
  return handler;
}
