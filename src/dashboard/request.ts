/**
 * What the handler reads from a request, each defensively: the URL, the presented token
 * (header or cookie), the JSON body of a POST, and whether a POST may change anything
 * (CSRF token, origin, content type, readOnly). Malformed input is refused or ignored,
 * never thrown at the client as an exception.
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { InvalidArgumentError } from "../errors.js";
import type { ApiAnswer } from "./api.js";
import type { CheckedDashboardOptions } from "./options.js";

/** The cookie that keeps a token given as `?token=`. */
export const TOKEN_COOKIE = "workpool_dashboard_token";
/** The header a POST carries the CSRF token in. */
export const CSRF_HEADER = "x-workpool-csrf";
/** Most bytes of a POST body. */
const MAX_BODY = 64 * 1024;

/** Compares two secrets in constant time for their length. */
export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The request's URL (Express strips its mount path from req.url and keeps the whole path
 * in originalUrl); null when malformed. A path is read as a path: "//host/x" is not
 * another host's "/x".
 */
export function requestUrl(req: IncomingMessage): URL | null {
  const target = (req as { originalUrl?: string }).originalUrl ?? req.url ?? "/";
  try {
    return new URL(target.startsWith("/") ? `http://dashboard.invalid${target}` : target);
  } catch {
    return null;
  }
}

/** A cookie's value; null when absent or not valid percent-encoding (a forged cookie is no token). */
function cookie(req: IncomingMessage, name: string): string | null {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k !== name) continue;
    try {
      return decodeURIComponent(v.join("="));
    } catch {
      return null;
    }
  }
  return null;
}

/** The token a request presents: Authorization: Bearer, else the cookie. */
export function presentedToken(req: IncomingMessage): string | null {
  const header = req.headers.authorization;
  if (header?.startsWith("Bearer ")) return header.slice(7);
  return cookie(req, TOKEN_COOKIE);
}

/** The JSON body of a POST (or what a body parser mounted before us already read). */
export async function readBody(req: IncomingMessage): Promise<unknown> {
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
export function refusePost(o: CheckedDashboardOptions, csrf: string, req: IncomingMessage): ApiAnswer | null {
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
