/**
 * The Host header, read strictly: a DNS name or an IPv4 address, or an IPv6 address in
 * brackets, each with an optional port, and nothing else. Without `auth` the dashboard
 * answers only a loopback name (against DNS rebinding), so a header that is not exactly
 * that shape is no name at all.
 */
import { isIP } from "node:net";
import { isLoopback } from "./options.js";

const HOST = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*))(?::([0-9]{1,5}))?$/;

/** The name a Host header gives, lower-cased (an IPv6 address in brackets, canonical), or null when it is malformed. */
export function hostHeaderName(header: string | undefined): string | null {
  const m = header === undefined ? null : HOST.exec(header);
  if (!m) return null;
  if (m[3] !== undefined && Number(m[3]) > 65_535) return null;
  if (m[2] !== undefined) return m[2].toLowerCase();
  if (isIP(m[1]!) !== 6) return null;
  // The URL parser writes an IPv6 address one way: [0:0:0:0:0:0:0:1] becomes [::1].
  return new URL(`http://[${m[1]}]/`).hostname;
}

/** Whether a Host header names this machine only: localhost, 127.0.0.0/8 or [::1], with an optional port. */
export function isLoopbackHostHeader(header: string | undefined): boolean {
  const name = hostHeaderName(header);
  return name !== null && isLoopback(name);
}
