/**
 * The workers started on one store, so that closing the store first stops them: a worker
 * left running (or a stop() not awaited) would otherwise keep calling a closed store, and
 * its running attempts would stay `running` until their leases expired.
 */

/** A started worker, as the store sees it. */
export interface StoreWorker {
  /** Stops the worker as stop({ timeoutMs: 0 }) does; resolves with a stop already in flight. */
  stopForClose(): Promise<void>;
}

/** The workers running on a store. */
export class RunningWorkers {
  private readonly workers = new Set<StoreWorker>();

  /** Records a started worker. */
  add(worker: StoreWorker): void {
    this.workers.add(worker);
  }

  /** Forgets a worker once it stopped. */
  delete(worker: StoreWorker): void {
    this.workers.delete(worker);
  }

  /** Stops every worker still running, waiting for stops already in flight. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.workers].map((w) => w.stopForClose()));
  }
}
