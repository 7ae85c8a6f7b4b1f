/**
 * The attempts this process is running for one pool: each is started, run (see
 * executor.ts), its outcome handed to the Completer, and its slot freed. Their leases are
 * kept alive by the heartbeat; they are aborted on cancel, timeout, lost lease or
 * shutdown.
 */
import type { WorkRow } from "../driver/driver.js";
import type { WorkId } from "../types.js";
import type { StartedEvent } from "../events.js";
import { AttemptAbort, AttemptAbortedError, type AbortCause } from "./attempt-abort.js";
import type { Completer } from "./completer.js";
import { runMutation } from "./executor.js";
import { BatchRunner } from "./batch-runner.js";
import { Heartbeat } from "./heartbeat.js";
import { AttemptOutputs, type AttemptOutput } from "./attempt-output.js";
import type { PoolRuntime } from "./runtime.js";
import { releaseAttempts } from "./transitions/release.js";
import { workLogLevel } from "./work-meta.js";
import { actionEnd, mutationEnd } from "./tracing.js";

interface Inflight {
  row: WorkRow;
  abort: AttemptAbort;
  /** Settles when the attempt's result is written (or dropped); null only while begin() sets it. */
  done: Promise<void> | null;
  /** Set (synchronously) once the action's outcome went to the Completer: stop() must not hand it back. */
  submitted: boolean;
  /** Set (synchronously) when stop() hands the attempt back: a late outcome is dropped. */
  handedBack: boolean;
  /** Its progress and log lines, once its handler reported any. */
  output: AttemptOutput | null;
  /** Set once its handler's outcome is in: a report made later (a handler still running in the background) is ignored. */
  ended: boolean;
}

const ABORT_MESSAGES: Record<AbortCause, string> = {
  canceled: "the work was canceled",
  timeout: "timed out",
  lost: "this worker lost the attempt's lease; it was handed to another worker",
  shutdown: "the worker is shutting down; the attempt was handed back to the queue",
};

/** The running attempts of one pool instance. */
export class Attempts<Tx> {
  private readonly inflight = new Map<string, Inflight>();
  private readonly heartbeat: Heartbeat<Tx>;
  private readonly outputs: AttemptOutputs<Tx>;
  /** Runs each action attempt, alone or (batch actions) in a batch. */
  private readonly actions: BatchRunner<Tx>;

  /**
   * @param freed called when an attempt ended and its slot is free, with whether the
   *   completion transaction already claimed work for it
   */
  constructor(
    private readonly rt: PoolRuntime<Tx>,
    private readonly completer: Completer<Tx>,
    private readonly freed: (refilled: boolean) => void,
  ) {
    const inflight = this.inflight;
    this.outputs = new AttemptOutputs(rt);
    this.actions = new BatchRunner(rt);
    this.heartbeat = new Heartbeat(rt, {
      get size() {
        return inflight.size;
      },
      rows: () => [...this.inflight.values()].map((f) => f.row),
      // Each answer is about one attempt: the heartbeat may answer after that attempt ended
      // and this worker claimed a newer one of the same work, which the answer is not about.
      canceled: ({ id, attempt }) => {
        const f = this.inflight.get(id);
        if (f && f.row.attempt === attempt) this.abort(f, "canceled");
      },
      lost: ({ id, attempt }) => {
        const f = this.inflight.get(id);
        // A mutation's row is locked by its own transaction; it is not lost.
        if (f && f.row.attempt === attempt && f.row.kind === "action") {
          rt.logger.warn(`workpool: lost the lease of ${id} attempt ${attempt}; aborting it`);
          this.abort(f, "lost");
        }
      },
    });
  }

  /** Number of attempts running now. */
  get size(): number {
    return this.inflight.size;
  }

  /** Ids of the attempts running now. */
  ids(): Set<string> {
    return new Set(this.inflight.keys());
  }

  /**
   * Settles when the attempts of `ids` (default: all) have ended and been recorded. Works
   * waiting to fill a batch start at once: the caller waits for them.
   */
  async settled(ids?: ReadonlySet<string>): Promise<void> {
    this.actions.startAll();
    const entries = [...this.inflight.entries()].filter(([id]) => !ids || ids.has(id));
    await Promise.all(entries.map(([, f]) => f.done));
  }

  /** Starts the attempt of a claimed row at `now`. */
  begin(row: WorkRow, now: number): void {
    const { rt } = this;
    // Built only when someone will see it: this runs for every job.
    const workLevel = workLogLevel(row);
    if (rt.events.wants("started", workLevel)) {
      const event: StartedEvent = {
        event: "started",
        pool: rt.pool,
        workId: row.id as WorkId,
        fnName: row.fnName,
        attempt: row.attempt,
        startedAt: now,
        startLagMs: Math.max(0, now - row.runAt),
      };
      if (row.priority !== 0) event.priority = row.priority;
      if (row.key !== null) event.key = row.key;
      if (workLevel !== undefined) event.logLevel = workLevel;
      rt.events.emit(event);
    }
    const entry: Inflight = { row, abort: new AttemptAbort(), done: null, submitted: false, handedBack: false, output: null, ended: false };
    // Set before the attempt can settle: the handler starts a microtask later.
    this.inflight.set(row.id, entry);
    entry.done = this.run(entry);
    this.heartbeat.ensure();
  }

  /** Runs one attempt, records its result, then frees its slot. */
  private async run(entry: Inflight): Promise<void> {
    const { rt } = this;
    const { row } = entry;
    // Whether the completion transaction already claimed work for the freed slot.
    let refilled = false;
    try {
      if (row.kind === "mutation") {
        const events = rt.tracing.enabled
          ? await rt.tracing.span(
              "attempt",
              rt.pool,
              row,
              () => runMutation(rt, row),
              (ev) => mutationEnd(row, ev),
            )
          : await runMutation(rt, row);
        for (const e of events) rt.events.emit(e);
      } else {
        const output = (): AttemptOutput => (entry.output ??= this.outputs.open(row, entry.ended));
        const outcome = rt.tracing.enabled
          ? await rt.tracing.span(
              "attempt",
              rt.pool,
              row,
              () => this.actions.runAction(row, entry.abort, output),
              (o) => actionEnd(row, o),
            )
          : await this.actions.runAction(row, entry.abort, output);
        entry.ended = true;
        // Its last progress and lines are stored before its outcome (or dropped with a lost attempt).
        if (entry.output) await this.outputs.finish(entry.output);
        // null: taken away from this worker (lease lost, shutdown); its result is not written.
        if (outcome && !entry.handedBack) {
          entry.submitted = true;
          refilled = await this.completer.submit(row, outcome);
        }
      }
    } catch (e) {
      rt.logger.error(
        `workpool: attempt ${row.attempt} of ${row.id} could not be recorded; its lease will expire and it will be rescued`,
        e,
      );
    }
    if (this.inflight.get(row.id) === entry) this.inflight.delete(row.id);
    if (this.inflight.size === 0) this.heartbeat.stop();
    this.freed(refilled);
  }

  /** Aborts the running attempt of `id`, if this process runs it. */
  abortById(id: string, cause: AbortCause): void {
    const f = this.inflight.get(id);
    if (f) this.abort(f, cause);
  }

  private abort(f: Inflight, cause: AbortCause): void {
    if (f.abort.aborted) return;
    f.abort.abort(new AttemptAbortedError(cause, ABORT_MESSAGES[cause]));
  }

  /**
   * Aborts the actions still running with cause "shutdown" and hands them back to the
   * queue unstarted. Attempts whose outcome is already with the Completer are written by
   * its flush instead: handing them back would run a finished action again.
   */
  async handBack(): Promise<void> {
    const left = [...this.inflight.values()].filter((f) => f.row.kind === "action" && !f.submitted);
    if (!left.length) return;
    for (const f of left) {
      f.handedBack = true;
      if (f.output) this.outputs.drop(f.output);
      this.abort(f, "shutdown");
    }
    await releaseAttempts(
      this.rt,
      left.map((f) => f.row),
    );
    for (const f of left) this.inflight.delete(f.row.id);
    this.rt.logger.warn(`workpool: stop handed ${left.length} running attempt(s) of pool "${this.rt.pool}" back to the queue`);
  }

  /** Stops the heartbeat (the worker is stopping; whatever is left is rescued by lease). */
  stopHeartbeat(): void {
    this.heartbeat.stop();
  }
}
