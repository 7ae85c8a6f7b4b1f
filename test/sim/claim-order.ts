/**
 * `priority-order`: a claim takes due work lowest priority number first. The faulty
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
