/**
 * A dashboard on a real HTTP server for tests, and small fetch helpers that speak its API
 * (session, CSRF header, JSON bodies).
 */
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { dashboardHandler, type DashboardOptions } from "../../src/dashboard/index.js";

/** A running dashboard. */
export interface ServedDashboard {
  /** The dashboard's address, ending in "/". */
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** Serves dashboardHandler(options) on `host` (default loopback) at a free port. */
export async function serveDashboard(options: DashboardOptions, host = "127.0.0.1"): Promise<ServedDashboard> {
  const handler = dashboardHandler(options);
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}${options.basePath ?? ""}/`,
    server,
    close: async () => {
      handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** GETs `path` (relative to the dashboard) and parses the JSON answer. */
export async function getJson(
  base: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(new URL(path, base), { headers });
  return { status: res.status, body: await res.json() };
}

/** The CSRF token the dashboard hands out. */
export async function csrfOf(base: string, headers: Record<string, string> = {}): Promise<string> {
  return ((await getJson(base, "api/session", headers)).body as { csrf: string }).csrf;
}

/** POSTs an action with a JSON body and the given headers (no CSRF header unless given). */
export async function postAction(
  base: string,
  name: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(new URL(`api/action/${name}`, base), {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/**
 * Sends `head` (the request line and headers, without the blank line) as it is over a new
 * connection to `base`'s host and port: for hostile requests fetch() would not send.
 */
export function rawRequest(base: string, head: string): Promise<{ status: number; headers: string; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname.replace(/^\[|\]$/g, ""));
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.on("error", reject);
    socket.on("end", () => {
      const [headers = "", ...rest] = text.split("\r\n\r\n");
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(headers)?.[1] ?? NaN);
      resolve({ status, headers, body: rest.join("\r\n\r\n") });
    });
    socket.write(`${head}\r\nConnection: close\r\n\r\n`);
  });
}
