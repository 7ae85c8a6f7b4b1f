/** How a workflow run's state, its blocked mismatch and its values read on the page. */
import type { WorkflowSummary } from "../api.js";

/** A run's state as one word: running, canceling, blocked, success, failed, canceled. */
export function runState(r: Pick<WorkflowSummary, "state" | "cancelRequested">): string {
  return r.state === "running" && r.cancelRequested ? "canceling" : r.state;
}

/** A journal call (`{ kind, name }`) as "kind name", or "nothing" for null. */
export function callText(call: { kind: string; name: string } | null): string {
  return call === null ? "nothing" : `${call.kind} ${call.name}`;
}

/** A blocked run's mismatch as one line: what the code called at entry n, and what the journal recorded. */
export function blockedText(b: NonNullable<WorkflowSummary["blocked"]>): string {
  return `entry ${b.n}: the code called ${callText(b.expected)}, the journal recorded ${callText(b.recorded)}`;
}

/** A JSON value on one line, cut to `max` characters ("" for undefined). */
export function shortJson(value: unknown, max = 120): string {
  if (value === undefined) return "";
  const s = JSON.stringify(value);
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** A datetime-local input's value as epoch ms in text, or undefined when empty or not a time. */
export function localTimeMs(value: string): string | undefined {
  if (value === "") return undefined;
  const t = new Date(value).getTime();
  return Number.isNaN(t) ? undefined : String(t);
}
