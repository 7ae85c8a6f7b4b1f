/**
 * Workflow versions. define()'s `version` is recorded with each run it starts; with
 * `pinVersion` the run is driven only by processes that define that version. A claim does
 * not choose by handler, so an advance of a pinned run may land in a process without its
 * version: that process runs nothing and parks the run (advance.ts), and every process that
 * defines the version picks the parked runs of its versions up, and advances them, at its
 * maintenance tick. The same tick writes this process's heartbeat rows (which workflows and
 * versions it defines), from which admin.workflowVersions() tells operators the versions no
 * live process defines.
 */
import { describeValue } from "../checks.js";
import type { Driver } from "../driver/driver.js";
import type { VersionGroup } from "../driver/workflow-version-ops.js";
import { InvalidArgumentError } from "../errors.js";
import type { InstanceDuty } from "../internal/instance-duties.js";
import { advance } from "./advance.js";
import { enqueueAdvance, opsOn, type Engine } from "./engine.js";
import type { DefineWorkflowOptions, WorkflowVersionInfo } from "./types.js";

/** How often a process writes its heartbeat rows, at most (it writes at maintenance ticks). */
const BEAT_MS = 10_000;
/** A heartbeat row counts as live this long, at least. */
const MIN_TTL_MS = 60_000;
/** Parked runs one version picks up per tick, in pages. */
const PICKUP_PAGE = 100;
const PICKUP_PAGES = 10;

/** The checked `version` and `pinVersion` of define()'s options. */
export function checkVersionOptions(o: Pick<DefineWorkflowOptions, "version" | "pinVersion">): { version: string | null; pinned: boolean } {
  const version = o.version === undefined ? null : checkVersion("options.version", o.version);
  if (o.pinVersion !== undefined && typeof o.pinVersion !== "boolean")
    throw new InvalidArgumentError("options.pinVersion", `must be true or false, got ${describeValue(o.pinVersion)}`);
  const pinned = o.pinVersion === true;
  if (pinned && version === null)
    throw new InvalidArgumentError("options.pinVersion", "needs options.version: a run is pinned to the version that started it");
  return { version, pinned };
}

/** A version: 1 to 100 characters of letters, digits and _ . : - / +. */
export function checkVersion(field: string, value: unknown): string {
  if (typeof value !== "string" || value.length === 0 || value.length > 100 || !/^[A-Za-z0-9_.:\-/+]+$/.test(value)) {
    throw new InvalidArgumentError(field, `must be 1 to 100 characters of letters, digits and _ . : - / +, got ${describeValue(value)}`);
  }
  return value;
}

/** How long a heartbeat row counts as live: a few maintenance ticks, a minute at least. */
export function liveTtlMs(maintenanceIntervalMs: number): number {
  return Math.max(MIN_TTL_MS, 3 * maintenanceIntervalMs);
}

/** The duty of one pool instance with a WorkflowManager: heartbeat rows, and parked runs of its versions picked up. */
export class VersionDuty<Tx> implements InstanceDuty {
  /** When this process last wrote its rows, and how many workflows it defined then. */
  private beat: { at: number; defs: number } | null = null;

  constructor(private readonly engine: Engine<Tx>) {}

  async tick(now: number): Promise<void> {
    const { engine } = this;
    const defs = [...engine.definitions.values()];
    if (!defs.length) return;
    if (this.beat === null || this.beat.defs !== defs.length || now - this.beat.at >= BEAT_MS) {
      const { rt } = engine;
      const ttl = liveTtlMs(rt.options.maintenanceIntervalMs);
      const wf = engine.driver.workflows();
      const rows = defs.map((d) => ({ name: d.name, version: d.version, pinned: d.pinned }));
      await wf.beatLive(rt.pool, rt.workerId, rows, now, now + ttl);
      // Rows of processes gone for a while: not live already, now not kept either.
      await wf.pruneLive(rt.pool, now - ttl);
      this.beat = { at: now, defs: defs.length };
    }
    for (const def of defs) if (def.version !== null) await this.pickUp(def.name, def.version);
  }

  async stop(): Promise<void> {
    if (this.beat === null) return;
    this.beat = null;
    // A process that stops is no longer live at once (a crashed one's rows expire).
    await this.engine.driver.workflows().dropLive(this.engine.rt.pool, this.engine.rt.workerId);
  }

  /**
   * Gives each parked run of `version` of workflow `name` an advance, and advances it here:
   * the advance enqueued may reach a process without the version again (which parks the
   * run anew, unless the advance here moved it on first), so each tick moves the run on.
   */
  private async pickUp(name: string, version: string): Promise<void> {
    const { engine } = this;
    for (let page = 0; page < PICKUP_PAGES; page++) {
      const ids = await engine.driver.workflows().parkedRuns(engine.rt.pool, name, version, PICKUP_PAGE);
      if (!ids.length) return;
      const picked: string[] = [];
      await engine.driver.transaction(async (ops) => {
        const wf = opsOn(engine, ops.tx);
        // The mark is cleared and the advance enqueued together: a parked run is never left without either.
        for (const id of ids) {
          if (!(await wf.unparkRun(id))) continue;
          await enqueueAdvance(engine, ops.tx, id);
          picked.push(id);
        }
      });
      for (const id of picked) {
        await advance(engine, id).catch((e: unknown) =>
          engine.rt.logger.warn(`workpool: workflow run ${id} was picked up but could not go on here; its advance will`, e),
        );
      }
      if (ids.length < PICKUP_PAGE) return;
    }
  }
}

/** What admin.workflowVersions() returns: every (pool, workflow, version) a live process defines or an unfinished run has. */
export async function readWorkflowVersions<Tx>(driver: Driver<Tx>, pool: string | null, now: number): Promise<WorkflowVersionInfo[]> {
  const wf = driver.workflows();
  const [live, runs] = await Promise.all([wf.liveVersions(pool, now), wf.unfinishedVersions(pool)]);
  const out = new Map<string, WorkflowVersionInfo>();
  const entry = (g: VersionGroup): WorkflowVersionInfo => {
    const key = JSON.stringify([g.pool, g.name, g.version]);
    let info = out.get(key);
    if (!info) {
      info = { pool: g.pool, name: g.name, version: g.version, pinned: false, unfinishedRuns: 0, live: false, processes: 0 };
      out.set(key, info);
    }
    info.pinned ||= g.pinned;
    return info;
  };
  for (const g of live) {
    const info = entry(g);
    info.processes = g.count;
    info.live = g.count > 0;
  }
  for (const g of runs) entry(g).unfinishedRuns = g.count;
  // No version ("") sorts first: a version has a character at least.
  return [...out.values()].sort((a, b) => cmp(a.pool, b.pool) || cmp(a.name, b.name) || cmp(a.version ?? "", b.version ?? ""));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
