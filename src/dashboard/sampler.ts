/**
 * The live chart's data: once a second, while someone watches, each pool's attempts
 * started and work finished since the previous sample (as rates per second), the mean
 * wait to start of the work that started since then, and how long its oldest due work has
 * waited. The last 15 minutes are kept in memory.
 */
import type { Clock } from "../clock.js";
import type { Driver } from "../driver/driver.js";
import { meanWait } from "../admin/reads.js";

/** How long the chart looks back, ms. */
export const WINDOW_MS = 15 * 60_000;
/** Time between samples, ms. */
export const SAMPLE_MS = 1000;
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
  /** Age of the oldest due pending work at the sample, ms (0: none waiting). */
  waitMs: number[];
  /** Mean wait to start (due to started) of the work that started since the previous sample, ms; null: none started. */
  startWaitMs: (number | null)[];
}

function emptySeries(): Series {
  return { t: [], started: [], finished: [], waitMs: [], startWaitMs: [] };
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

  /** Someone is looking: keep sampling (starts the timer when stopped). */
  watch(): void {
    this.watchedAt = this.clock.now();
    if (this.timer !== null) return;
    this.timer = setInterval(() => void this.sample(), SAMPLE_MS);
    this.timer.unref();
    void this.sample();
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
    this.last = now;
    try {
      // The first sample only sets where counting starts: there is no interval to rate yet.
      const rows = await this.driver.readPools(now, since === null ? now : since + 1);
      if (since === null || now <= since) return;
      const seconds = (now - since) / 1000;
      for (const r of rows) {
        let s = this.pools.get(r.name);
        if (!s) this.pools.set(r.name, (s = emptySeries()));
        s.t.push(now);
        s.started.push(r.startedSince / seconds);
        s.finished.push(r.finishedSince / seconds);
        s.waitMs.push(r.oldestDueRunAt === null ? 0 : Math.max(0, now - r.oldestDueRunAt));
        s.startWaitMs.push(meanWait(r));
        const drop = s.t.findIndex((t) => t >= now - WINDOW_MS);
        if (drop > 0) for (const k of ["t", "started", "finished", "waitMs", "startWaitMs"] as const) s[k].splice(0, drop);
      }
    } catch (e) {
      this.onError(e);
    }
  }

  /** One pool's series, or every pool's summed per sample (null: all). */
  series(pool: string | null): Series {
    if (pool !== null) return this.pools.get(pool) ?? emptySeries();
    // Per sample time: rates summed, the longest oldest wait, and the mean start wait weighted by starts.
    const sum = new Map<number, [number, number, number, number, number]>();
    for (const s of this.pools.values()) {
      s.t.forEach((t, i) => {
        const v = sum.get(t) ?? [0, 0, 0, 0, 0];
        const wait = s.startWaitMs[i];
        const weight = wait === null || wait === undefined ? 0 : s.started[i]!;
        sum.set(t, [v[0] + s.started[i]!, v[1] + s.finished[i]!, Math.max(v[2], s.waitMs[i]!), v[3] + (wait ?? 0) * weight, v[4] + weight]);
      });
    }
    const out = emptySeries();
    for (const t of [...sum.keys()].sort((a, b) => a - b)) {
      const [started, finished, wait, waitSum, weight] = sum.get(t)!;
      out.t.push(t);
      out.started.push(started);
      out.finished.push(finished);
      out.waitMs.push(wait);
      out.startWaitMs.push(weight > 0 ? Math.round(waitSum / weight) : null);
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
