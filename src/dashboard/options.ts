/**
 * The options of dashboardHandler(): checked in the style of the rest of the API (an
 * InvalidArgumentError naming the field; unknown keys are errors), and what "loopback"
 * means for the rule that a dashboard reachable from elsewhere needs `auth`.
 */
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import type { Clock } from "../clock.js";
import type { Logger } from "../events.js";
import { InvalidArgumentError } from "../errors.js";
import { checkClock } from "../options.js";
import { checkOptionKeys, describeValue, optionKeys } from "../checks.js";

/** Decides whether a request may use the dashboard: the app's own auth. */
export type DashboardAuthFunction = (req: IncomingMessage) => boolean | Promise<boolean>;

/** Options of dashboardHandler(). */
export interface DashboardOptions {
  /** A store from sqliteStore() or postgresStore(). */
  store: unknown;
  /** The path the handler is mounted at, e.g. "/admin/workpool" (default ""). Requests outside it get 404. */
  basePath?: string;
  /**
   * A token (16 to 1000 characters) the browser presents once as `?token=` (kept in an
   * HttpOnly cookie) or as `Authorization: Bearer`, or a function deciding from the request.
   * Without it the dashboard answers only requests that arrive on a loopback address.
   */
  auth?: string | DashboardAuthFunction;
  /** Shows everything and changes nothing: actions are hidden and refused. */
  readOnly?: boolean;
  /** Time source for ages and the chart (default: the system clock). */
  clock?: Clock;
  /**
   * Where the handler reports what it could not answer (a throwing `auth`, an unreachable
   * store), called pino's way: `logger.error({ err, method, path }, message)`. Default: console.
   * Clients only ever get a generic 500.
   */
  logger?: DashboardLogger;
}

/** What the dashboard logs through: the error method of a workpool `Logger` (console and pino fit). */
export type DashboardLogger = Pick<Logger, "error">;

/** Options after checking. */
export interface CheckedDashboardOptions {
  basePath: string;
  auth: string | DashboardAuthFunction | null;
  readOnly: boolean;
  clock: Clock | undefined;
  logger: DashboardLogger;
}

const KEYS = optionKeys<DashboardOptions>()({ store: true, basePath: true, auth: true, readOnly: true, clock: true, logger: true });

const SEGMENT = /^[A-Za-z0-9_.~-]+$/;

/**
 * A mount path as requests spell it: "" (the root), or "/" and segments of letters, digits
 * and _ . ~ -, without a trailing "/". A "." or ".." segment or an empty one is refused:
 * request paths are resolved before they are matched, so such a path would match nothing.
 */
function checkBasePath(value: unknown): string {
  const path = typeof value === "string" && value.endsWith("/") ? value.slice(0, -1) : value;
  if (path === "") return "";
  const segments = typeof path === "string" && path.length <= 200 && path.startsWith("/") ? path.slice(1).split("/") : [];
  if (!segments.length || segments.some((s) => !SEGMENT.test(s) || s === "." || s === "..")) {
    throw new InvalidArgumentError(
      "basePath",
      'must be "" or a path like "/admin/workpool" of at most 200 characters: segments of letters, digits and _ . ~ -, ' +
        `each after one "/", none of them "." or "..", got ${describeValue(value)}`,
    );
  }
  return path as string;
}

/** Checks dashboardHandler()'s options (the store is checked by workpoolAdmin()). */
export function checkDashboardOptions(options: unknown): CheckedDashboardOptions {
  const o = checkOptionKeys("options", options, KEYS, "dashboardHandler()") as Partial<DashboardOptions>;
  const basePath = o.basePath === undefined ? "" : checkBasePath(o.basePath);
  let auth: string | DashboardAuthFunction | null = null;
  if (o.auth !== undefined) {
    if (typeof o.auth === "string") {
      if (o.auth.length < 16 || o.auth.length > 1000 || !/^[\x21-\x7e]+$/.test(o.auth)) {
        throw new InvalidArgumentError(
          "auth",
          "must be a token of 16 to 1000 printable ASCII characters (no spaces), or a function (req) => boolean",
        );
      }
    } else if (typeof o.auth !== "function") {
      throw new InvalidArgumentError("auth", `must be a token string or a function (req) => boolean, got ${describeValue(o.auth)}`);
    }
    auth = o.auth;
  }
  if (o.readOnly !== undefined && typeof o.readOnly !== "boolean") {
    throw new InvalidArgumentError("readOnly", `must be true or false, got ${describeValue(o.readOnly)}`);
  }
  const logger = o.logger as Partial<Record<keyof DashboardLogger, unknown>> | null | undefined;
  if (logger !== undefined && (typeof logger !== "object" || logger === null || typeof logger.error !== "function")) {
    throw new InvalidArgumentError(
      "logger",
      `must have an error(fields, message) method (console and pino fit), got ${describeValue(logger)}`,
    );
  }
  return {
    basePath,
    auth,
    readOnly: o.readOnly ?? false,
    clock: o.clock === undefined ? undefined : checkClock(o.clock),
    logger: o.logger ?? console,
  };
}

/** Whether `host` (a name or an address, as given to listen() or seen on a socket) is this machine only. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  if (h === "::1") return true;
  // An IPv4 address on an IPv6 socket.
  return h.startsWith("::ffff:") && isIP(h.slice(7)) === 4 && h.slice(7).startsWith("127.");
}
