/**
 * The executions this process keeps between advances, so a run that stays in one live
 * process continues in memory when a step finishes instead of replaying its journal. An
 * execution is kept with the run generation it wrote; any other writer moves the
 * generation and the kept one is dropped. Runs that wait on sleeps, events or child runs
 * are not kept (a waiting run costs a row, not memory), and at most `capacity` are.
 */
import type { Execution } from "./execution.js";

/** Executions by run id, with a lock so one advance of a run runs at a time in this process. */
export class Executions {
  private readonly kept = new Map<string, { exec: Execution; generation: number }>();
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(readonly capacity: number) {}

  /** The execution kept for `runId` at `generation`, taken out of the cache; null if none. */
  take(runId: string, generation: number): Execution | null {
    const k = this.kept.get(runId);
    this.kept.delete(runId);
    return k && k.generation === generation ? k.exec : null;
  }

  /** Keeps `exec` at `generation` (the oldest kept run goes when full). */
  keep(runId: string, exec: Execution, generation: number): void {
    this.kept.delete(runId);
    if (this.kept.size >= this.capacity) {
      const oldest = this.kept.keys().next();
      if (!oldest.done) this.kept.delete(oldest.value);
    }
    this.kept.set(runId, { exec, generation });
  }

  /** Forgets `runId`'s execution. */
  drop(runId: string): void {
    this.kept.delete(runId);
  }

  /** How many executions are kept. */
  get size(): number {
    return this.kept.size;
  }

  /** Runs `fn` after the advances of `runId` already running in this process. */
  async serial<T>(runId: string, fn: () => Promise<T>): Promise<T> {
    const before = this.locks.get(runId) ?? Promise.resolve();
    const mine = before.then(fn, fn);
    const tail = mine.catch(() => undefined);
    this.locks.set(runId, tail);
    try {
      return await mine;
    } finally {
      if (this.locks.get(runId) === tail) this.locks.delete(runId);
    }
  }
}
