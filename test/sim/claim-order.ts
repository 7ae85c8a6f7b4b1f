/**
 * `priority-order`: a claim takes due work lowest priority number first. `key-turns`:
 * within a priority, keys take turns: a claim takes a second row of one key only after
 * every key with due work and room had its turn. The faulty
 * driver reports every claim once it committed, and the checker reads the rows right
 * after that store call (no other call runs between), so the rows show the moment of the
 * claim: the rows it took are running, the rest of the pool is as the claim left it.
 */
import type { WorkRow } from "../../src/driver/driver.js";
import type { ClaimSeen } from "./faulty-driver.js";
import type { Snapshot } from "./stores.js";
import { Violation } from "./violation.js";

/**
 * Throws when a claim took a row of a larger priority number than a row it left behind
 * that it could have taken instead: pending, due at the claim's time, not parked, and of
 * no key or a key still under the stored keyParallelism after the claim (a key's running
 * count only grows during a claim, so it had room when the claim passed it too). Under a
 * keyRateLimit a key's window may hold its work back: only rows of no key count then.
 * Claims whose transaction went on after them are skipped (the rows show its end).
 */
export function checkClaimOrder(
  claims: readonly ClaimSeen[],
  rows: readonly WorkRow[],
  { parked, config, rates }: Pick<Snapshot, "parked" | "config" | "rates">,
  label: (id: string) => string,
): void {
  if (!claims.length) return;
  const byId = new Map(rows.map((r) => [r.id, r]));
  const runningPerKey = new Map<string, number>();
  for (const r of rows) if (r.state === "running" && r.key !== null) runningPerKey.set(r.key, (runningPerKey.get(r.key) ?? 0) + 1);
  const limit = config?.keyParallelism ?? Infinity;
  for (const c of claims) {
    if (!c.atCommit) continue;
    const taken = c.claimed.map((id) => byId.get(id)).filter((r) => r !== undefined);
    if (!taken.length) continue;
    const top = taken.reduce((a, b) => (b.priority > a.priority ? b : a));
    const passed = rows.find(
      (r) =>
        r.state === "pending" &&
        r.runAt <= c.now &&
        r.priority < top.priority &&
        !parked.has(r.id) &&
        (r.key === null || (rates.keyRateLimit === null && (runningPerKey.get(r.key) ?? 0) < limit)),
    );
    if (passed) {
      throw new Violation(
        "priority-order",
        `${c.proc} ${c.method} took ${label(top.id)} (priority ${top.priority}) and left ${label(passed.id)} ` +
          `(priority ${passed.priority}${passed.key === null ? "" : `, key ${passed.key} with room`}) due and pending`,
      );
    }
  }
}

/**
 * Throws when a claim took two rows of one key (or of no key) at a priority and left a row
 * of another key (or of no key) at that priority untaken although it was pending, due, not
 * parked and its key had room: that key's turn would have come first. A claim stops looking
 * for keys after (free slots + 16) keys passed over: pools whose pending work may cost that
 * many are not checked, nor are pools under a keyRateLimit (a key's window may hold it).
 */
export function checkKeyTurns(
  claims: readonly ClaimSeen[],
  rows: readonly WorkRow[],
  { parked, config, rates }: Pick<Snapshot, "parked" | "config" | "rates">,
  label: (id: string) => string,
): void {
  if (!claims.length || rates.keyRateLimit !== null) return;
  // Keys looked at cost a claim at most one miss each (work without a key: one per priority).
  const keyed = rows.filter((r) => r.state === "pending" && r.key !== null);
  if (new Set(keyed.map((r) => `${r.priority}:${r.key}`)).size + new Set(keyed.map((r) => r.priority)).size > 17) return;
  const byId = new Map(rows.map((r) => [r.id, r]));
  const runningPerKey = new Map<string, number>();
  for (const r of rows) if (r.state === "running" && r.key !== null) runningPerKey.set(r.key, (runningPerKey.get(r.key) ?? 0) + 1);
  const limit = config?.keyParallelism ?? Infinity;
  const turnOf = (priority: number, key: string | null) => `${priority}\u0000${key === null ? "" : `k${key}`}`;
  for (const c of claims) {
    if (!c.atCommit) continue;
    const taken = new Map<string, WorkRow[]>();
    for (const id of c.claimed) {
      const r = byId.get(id);
      if (r) taken.set(turnOf(r.priority, r.key), [...(taken.get(turnOf(r.priority, r.key)) ?? []), r]);
    }
    for (const [first, second] of taken.values()) {
      if (!second) continue;
      const passed = rows.find(
        (r) =>
          r.state === "pending" &&
          r.runAt <= c.now &&
          r.priority === first!.priority &&
          !parked.has(r.id) &&
          !taken.has(turnOf(r.priority, r.key)) &&
          (r.key === null || (runningPerKey.get(r.key) ?? 0) < limit),
      );
      if (passed) {
        throw new Violation(
          "key-turns",
          `${c.proc} ${c.method} took ${label(first!.id)} and ${label(second.id)} (key ${first!.key ?? "none"}) and left ` +
            `${label(passed.id)} (key ${passed.key ?? "none"}, priority ${passed.priority}) due and pending`,
        );
      }
    }
  }
}
