/** How times, ages, values, states and limits read on the page. */
import type { PoolSummary } from "../api.js";

/** A duration in ms, short: "850 ms", "12 s", "3 min", "2 h", "4 d". */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  if (ms < 86_400_000) return `${Math.round(ms / 3_600_000)} h`;
  return `${Math.round(ms / 86_400_000)} d`;
}

/** A duration in ms as `duration()` has it, or "–" when there is none. */
export function durationOrDash(ms: number | null): string {
  return ms === null ? "–" : duration(ms);
}

/** An epoch time as local date and time, or "–". */
export function when(t: number | null | undefined): string {
  if (t === null || t === undefined) return "–";
  const d = new Date(t);
  return `${d.toLocaleDateString()} ${d.toLocaleTimeString()}`;
}

/** A JSON value as indented text (undefined: "–"). */
export function json(value: unknown): string {
  return value === undefined ? "–" : JSON.stringify(value, null, 2);
}

/** A work's state as one word: pending, retrying, running, success, failed, canceled. */
export function stateOf(w: { state: string; resultKind: string | null; attempts: number }): string {
  if (w.state === "finished") return w.resultKind ?? "finished";
  if (w.state === "pending" && w.attempts > 0) return "retrying";
  return w.state;
}

/** A pool's limit as a cell: "10", or "paused (10)". */
export function limitText(p: PoolSummary): string {
  return p.pausedFrom !== null ? `paused (${p.pausedFrom})` : String(p.maxParallelism);
}

/** Whatever a failed promise gave, as a line of text. */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
