/**
 * The invariants of step.map() and step.patched() on the stored journals, after every step
 * (see docs/testing.md): `map-window` (at most `concurrency` of a map's item steps open at
 * once, each item journaled at most once), `map-fail-fast` (the items a failing item ended
 * are canceled with their work, and no item starts after) and `patch-marker` (a marker is
 * never delivered and names a patch of the run's code; where it sits is the journal check's).
 * A map's items are the entries of actions named after the map (its id, unique in the run);
 * a run makes each map call at most once.
 */
import type { WorkRow } from "../../src/driver/driver.js";
import { Violation } from "./violation.js";
import { outcomeOf } from "./wf-events.js";
import type { WfEntry, WfRun } from "./wf-rows.js";
import type { WfOp, WfShape } from "./wf-shapes.js";

type MapOp = Extract<WfOp, { k: "map" }>;

/** Checks the maps and patch markers of a pool's runs step by step. */
export class MapChecker {
  private readonly maps = new Map<string, MapOp>();
  private readonly patchIds = new Map<string, Set<string>>();
  /** Per run and map, how many items it had journaled when a fail-fast was first seen. */
  private readonly endedAt = new Map<string, number>();
  /** Per run, where its journal was last cut (see rebase). */
  private readonly base = new Map<string, number>();

  constructor(
    shapes: readonly WfShape[],
    changed: readonly WfShape[] | null,
    private readonly label: (id: string) => string,
    private readonly runLabel: (id: string) => string,
  ) {
    for (const shape of [...shapes, ...(changed ?? [])]) {
      const ids = this.patchIds.get(shape.name) ?? new Set<string>();
      for (const op of shape.body) {
        if (op.k === "map") this.maps.set(op.id, op);
        if (op.k === "patch" || op.k === "deprecate") ids.add(op.id);
      }
      this.patchIds.set(shape.name, ids);
    }
  }

  /**
   * A restart, skip or fork left the run's journal cut at `base`, maybe inside a map's
   * round: its function replays the entries before it and may journal a map's items anew.
   * What was seen of its maps is forgotten, and an item ended before `base` counts as a
   * failure for the items the map ends after it (a replay meets it as one).
   */
  rebase(runId: string, base: number): void {
    for (const key of this.endedAt.keys()) if (key.startsWith(`${runId} `)) this.endedAt.delete(key);
    this.base.set(runId, base);
  }

  /** Checks one run's journal (`own`, in order) with the work rows of the same step. */
  check(run: WfRun, own: readonly WfEntry[], rows: Map<string, WorkRow>): void {
    const items = new Map<string, WfEntry[]>();
    for (const e of own) {
      if (e.kind === "patch") this.checkMarker(run, e);
      const op = e.kind === "action" ? this.maps.get(e.name) : undefined;
      if (op) items.set(op.id, [...(items.get(op.id) ?? []), e]);
    }
    for (const [id, entries] of items) {
      const op = this.maps.get(id)!;
      this.checkWindow(run, op, entries);
      this.checkFailFast(run, op, entries, rows);
    }
  }

  /** map-window: open items within the window; no more item steps than items. */
  private checkWindow(run: WfRun, op: MapOp, entries: readonly WfEntry[]): void {
    const name = `run ${this.runLabel(run.id)} map ${op.id}`;
    const open = entries.filter((e) => e.outcome === null);
    if (open.length > op.concurrency)
      throw new Violation(
        "map-window",
        `${name} has ${open.length} item steps open (${open.map((e) => e.n).join(", ")}), its concurrency is ${op.concurrency}`,
      );
    if (entries.length > op.items.length)
      throw new Violation("map-window", `${name} journaled ${entries.length} item steps for ${op.items.length} items`);
  }

  /**
   * map-fail-fast: an item ended by the map's own code (canceled, byCode) is in a fail-fast
   * map where another item failed or was canceled; once one is, no item of the map is open,
   * its work is finished or asked to cancel, and the map journals no further item.
   */
  private checkFailFast(run: WfRun, op: MapOp, entries: readonly WfEntry[], rows: Map<string, WorkRow>): void {
    const name = `run ${this.runLabel(run.id)} map ${op.id}`;
    const base = this.base.get(run.id) ?? 0;
    const ended = entries.filter((e) => {
      const o = outcomeOf(e) as { kind: string; byCode?: boolean } | null;
      return o?.kind === "canceled" && o.byCode === true;
    });
    if (ended.length && op.onFailure !== "fail-fast")
      throw new Violation("map-fail-fast", `${name} (${op.onFailure}) ended item step ${ended[0]!.n} itself`);
    const byCode = ended.filter((e) => e.n >= base);
    const key = `${run.id} ${op.id}`;
    const before = this.endedAt.get(key);
    if (before !== undefined && entries.length > before)
      throw new Violation("map-fail-fast", `${name} failed fast with ${before} items journaled, yet now has ${entries.length}`);
    if (!byCode.length) return;
    const failed = entries.some((e) => {
      const o = outcomeOf(e);
      if (o === null) return false;
      return o.kind === "failed" || (o.kind === "canceled" && (e.n < base || (!byCode.includes(e) && o.by === undefined)));
    });
    if (!failed) throw new Violation("map-fail-fast", `${name} ended item step ${byCode[0]!.n}, but no item failed`);
    const open = entries.find((e) => e.outcome === null);
    if (open) throw new Violation("map-fail-fast", `${name} failed fast, yet item step ${open.n} is still open`);
    for (const e of byCode) {
      const row = e.workId === null ? undefined : rows.get(e.workId);
      if (row && row.state !== "finished" && !row.cancelRequested)
        throw new Violation(
          "map-fail-fast",
          `${name}: item step ${e.n} was ended, but its work ${this.label(row.id)} is still ${row.state}`,
        );
    }
    if (before === undefined) this.endedAt.set(key, entries.length);
  }

  /** patch-marker: a marker has no outcome, work or child, is never delivered, and names a patch of the run's code. */
  private checkMarker(run: WfRun, e: WfEntry): void {
    const name = `run ${this.runLabel(run.id)}: marker ${e.n} (${e.name})`;
    if (e.delivered !== null) throw new Violation("patch-marker", `${name} was delivered in generation ${e.delivered}`);
    if (e.outcome !== null || e.workId !== null || e.childId !== null || e.state !== "done")
      throw new Violation("patch-marker", `${name} is ${e.state} with outcome ${e.outcome ?? "none"}, work ${e.workId ?? "none"}`);
    if (!this.patchIds.get(run.name)?.has(e.name)) throw new Violation("patch-marker", `${name} names no patch of ${run.name}`);
  }
}
