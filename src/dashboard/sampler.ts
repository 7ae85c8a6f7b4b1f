/**
 * The live chart's data: once a second, while someone watches, each pool's attempts
 * started and work finished since the previous sample (as rates per second), the mean
 * wait to start of the work that started since then, and how long its oldest due work has
 * waited. The last 15 minutes are kept in memory. When sampling starts (or starts again
 * after a pause), the time it did not see, up to 15 minutes, is filled from the store's
 * rows in steps of 10 s (see history.ts).
 */
import type { Clock } from "../clock.js";
import type { Driver } from "../driver/driver.js";
import { startedSince } from "../admin/pool-counts.js";
import { meanWait } from "../admin/reads.js";
import { historyPoints } from "./history.js";

/** How long the chart looks back, ms. */
export const WINDOW_MS = 15 * 60_000;
/** Time between samples, ms. */
export const SAMPLE_MS = 1000;
/** Time between the points filled from the store's rows, ms. */
export const HISTORY_STEP_MS = 10_000;
/** Sampling stops when nobody asked for the chart for this long, ms. */
const IDLE_MS = 60_000;

/** The series of one pool (or of all pools summed), as parallel arrays. */
export interface Series {
  /** Sample times, epoch ms. */
  t: number[];
  /** Attempts started per second since the previous sample. */
  started: number[];
  /** Work finished per second since the previous sample. */
  finished: number[];
  /** Age of the oldest due pending work at the sample, ms (0: none waiting; null: not known, a point filled from the store's rows). */
  waitMs: (number | null)[];
  /** Mean wait to start (due to started) of the work that started since the previous sample, ms; null: none started. */
  startWaitMs: (number | null)[];
}

/** A series with no points. */
function emptySeries(): Series {
  return { t: [], started: [], finished: [], waitMs: [], startWaitMs: [] };
}

const FIELDS = ["t", "started", "finished", "waitMs", "startWaitMs"] as const;

/** Drops the points older than the window. */
function trim(s: Series, now: number): void {
  const drop = s.t.findIndex((t) => t >= now - WINDOW_MS);
  if (drop !== 0) for (const k of FIELDS) s[k].splice(0, drop === -1 ? s.t.length : drop);
}

/** Keeps the samples of every pool; sampling runs only between watch() and a minute of silence. */
export class Sampler {
  private readonly pools = new Map<string, Series>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private last: number | null = null;
  private watchedAt = 0;
  private running: Promise<void> | null = null;

  constructor(
    private readonly driver: Driver<unknown>,
    private readonly clock: Clock,
    private readonly onError: (e: unknown) => void,
  ) {}

  /**
   * Someone is looking: keep sampling (starts the timer when stopped). Resolves once the
   * series hold what the store can tell: at once while sampling, after the first sample
   * (which fills the past from the rows) when it starts.
   */
  watch(): Promise<void> {
    this.watchedAt = this.clock.now();
    if (this.timer !== null) return Promise.resolve();
    this.timer = setInterval(() => void this.sample(), SAMPLE_MS);
    this.timer.unref();
    return this.sample();
  }

  /** Takes one sample now (the timer calls this; tests may too). Concurrent calls share one read. */
  sample(): Promise<void> {
    this.running ??= this.read().finally(() => (this.running = null));
    return this.running;
  }

  private async read(): Promise<void> {
    const now = this.clock.now();
    if (this.timer !== null && now - this.watchedAt > IDLE_MS) return this.stop();
    const since = this.last;
    try {
      // Where sampling starts, the rows tell what happened before; the next sample counts from here.
      if (since === null) return await this.fill(now);
      this.last = now;
      const rows = await this.driver.readPools(now, since + 1);
      if (now <= since) return;
      const seconds = (now - since) / 1000;
      for (const r of rows) {
        const s = this.seriesOf(r.name);
        s.t.push(now);
        s.started.push(startedSince(r) / seconds);
        s.finished.push(r.finishedSince / seconds);
        s.waitMs.push(r.oldestDueRunAt === null ? 0 : Math.max(0, now - r.oldestDueRunAt));
        s.startWaitMs.push(meanWait(r));
        trim(s, now);
      }
    } catch (e) {
      this.onError(e);
    }
  }

  /** Fills every pool's series from its newest point (at most the window back) to `now`, from the store's rows. */
  private async fill(now: number): Promise<void> {
    const newest = Math.max(...[...this.pools.values()].map((s) => s.t[s.t.length - 1] ?? -Infinity));
    const from = Math.max(now - WINDOW_MS, newest);
    const names = (await this.driver.readPools(now, now)).map((r) => r.name);
    const reads = from < now && names.length ? await this.driver.readActivity(names, from, now, HISTORY_STEP_MS) : [];
    for (const [name, points] of historyPoints(names, reads, from, now, HISTORY_STEP_MS)) {
      const s = this.seriesOf(name);
      for (const p of points) for (const k of FIELDS) (s[k] as unknown[]).push(p[k]);
      trim(s, now);
    }
    for (const s of this.pools.values()) trim(s, now);
    this.last = now;
  }

  private seriesOf(pool: string): Series {
    let s = this.pools.get(pool);
    if (!s) this.pools.set(pool, (s = emptySeries()));
    return s;
  }

  /** One pool's series, or every pool's summed per sample (null: all). */
  series(pool: string | null): Series {
    if (pool !== null) return this.pools.get(pool) ?? emptySeries();
    // Per sample time: rates summed, the longest oldest wait (null when no pool's is known), and the mean start wait weighted by starts.
    const sum = new Map<number, { started: number; finished: number; wait: number | null; waitSum: number; weight: number }>();
    for (const s of this.pools.values()) {
      s.t.forEach((t, i) => {
        let v = sum.get(t);
        if (!v) sum.set(t, (v = { started: 0, finished: 0, wait: null, waitSum: 0, weight: 0 }));
        const startWait = s.startWaitMs[i] ?? null;
        const weight = startWait === null ? 0 : s.started[i]!;
        const wait = s.waitMs[i] ?? null;
        v.started += s.started[i]!;
        v.finished += s.finished[i]!;
        if (wait !== null) v.wait = Math.max(v.wait ?? 0, wait);
        v.waitSum += (startWait ?? 0) * weight;
        v.weight += weight;
      });
    }
    const out = emptySeries();
    for (const t of [...sum.keys()].sort((a, b) => a - b)) {
      const v = sum.get(t)!;
      out.t.push(t);
      out.started.push(v.started);
      out.finished.push(v.finished);
      out.waitMs.push(v.wait);
      out.startWaitMs.push(v.weight > 0 ? Math.round(v.waitSum / v.weight) : null);
    }
    return out;
  }

  /** Stops sampling (history is kept; the next watch() resumes). */
  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.last = null;
  }
}
