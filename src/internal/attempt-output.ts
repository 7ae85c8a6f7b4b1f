/**
 * What this process's running actions report of themselves (progress, log lines), kept
 * per attempt and written coalesced: at most one write of a pool's changed attempts per
 * {@link OUTPUT_FLUSH_MS}, all in one store call, and each attempt's last state before its
 * outcome is recorded. Work that reports nothing costs nothing here. Every write is fenced
 * by the store (the attempt still running for this worker); an attempt whose write did not
 * apply, or that ended, writes no more.
 */
import type { TimerHandle } from "../clock.js";
import type { AttemptOutputWrite, WorkRow } from "../driver/driver.js";
import type { ProgressEvent } from "../events.js";
import type { WorkId } from "../types.js";
import { AttemptLogBuffer, logLine, type AttemptLog, type AttemptLogLevel } from "./attempt-logs.js";
import { encodeProgress, type Progress } from "./progress.js";
import type { PoolRuntime } from "./runtime.js";
import { workLogLevel } from "./work-meta.js";

/** The least time between two writes of a pool's attempt output, ms. */
export const OUTPUT_FLUSH_MS = 500;

/** One running attempt's progress and log lines, kept until written. */
export class AttemptOutput {
  /** JSON of the last progress reported, or null. */
  private progress: string | null = null;
  private progressAt: number | null = null;
  /** Whether the progress changed since the last write. */
  progressChanged = false;
  private logs: AttemptLogBuffer | null = null;
  /** Set once the attempt ended or is no longer this worker's: later calls change nothing. */
  closed = false;
  /** `ctx.log`. */
  readonly log: AttemptLog;

  constructor(
    readonly row: WorkRow,
    private readonly owner: AttemptOutputs<unknown>,
  ) {
    this.log = {
      info: (message, fields) => this.addLine("info", message, fields),
      warn: (message, fields) => this.addLine("warn", message, fields),
      error: (message, fields) => this.addLine("error", message, fields),
    };
  }

  /** `ctx.reportProgress(value)`: checked first, so a bad value changes nothing. */
  reportProgress(value: Progress): void {
    const json = encodeProgress(value);
    if (this.closed) return;
    this.progress = json;
    this.progressAt = this.owner.now();
    this.progressChanged = true;
    this.owner.changed(this);
  }

  private addLine(level: AttemptLogLevel, message: unknown, fields: unknown): void {
    const line = logLine(level, message, fields, this.owner.now());
    if (this.closed) return;
    (this.logs ??= new AttemptLogBuffer()).add(line);
    this.owner.changed(this);
  }

  /** The whole record, as written now. */
  toWrite(): AttemptOutputWrite {
    return {
      id: this.row.id,
      attempt: this.row.attempt,
      progress: this.progress,
      progressAt: this.progressAt,
      logs: this.logs ? this.logs.toJson() : null,
      logsDropped: this.logs ? this.logs.dropped : 0,
    };
  }

  /** The last progress reported, parsed (for the progress event). */
  progressValue(): Progress | null {
    return this.progress === null ? null : (JSON.parse(this.progress) as Progress);
  }
}

/** The attempt output of one pool instance's running actions, and its coalesced writes. */
export class AttemptOutputs<Tx> {
  private readonly dirty = new Set<AttemptOutput>();
  private timer: TimerHandle | null = null;
  /** The writes in order, one at a time: an attempt's writes never pass each other. */
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly rt: PoolRuntime<Tx>) {}

  /** The pool's clock. */
  now(): number {
    return this.rt.options.clock.now();
  }

  /** The output of an attempt, made when its handler first reports; `ended`: the attempt has ended, so it keeps nothing. */
  open(row: WorkRow, ended = false): AttemptOutput {
    const output = new AttemptOutput(row, this as AttemptOutputs<unknown>);
    output.closed = ended;
    return output;
  }

  /** `output` has something unwritten: it goes with the next write. */
  changed(output: AttemptOutput): void {
    this.dirty.add(output);
    this.timer ??= this.rt.options.clock.setTimeout(() => {
      this.timer = null;
      const batch = [...this.dirty];
      this.dirty.clear();
      void this.write(batch);
    }, OUTPUT_FLUSH_MS);
  }

  /**
   * The attempt of `output` ended: writes what it has not written yet (after any write in
   * flight), so its last state is stored before its outcome. Later calls are ignored.
   */
  async finish(output: AttemptOutput): Promise<void> {
    output.closed = true;
    if (this.dirty.delete(output)) {
      this.disarmIfIdle();
      await this.write([output]);
    } else {
      await this.writing;
    }
  }

  /** The attempt of `output` was handed back or taken away: what it has not written is dropped. */
  drop(output: AttemptOutput): void {
    output.closed = true;
    this.dirty.delete(output);
    this.disarmIfIdle();
  }

  private disarmIfIdle(): void {
    if (this.dirty.size > 0 || this.timer === null) return;
    this.rt.options.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  /** Queues one write of `batch` after the one in flight; settles when it was made (or failed, logged). */
  private write(batch: AttemptOutput[]): Promise<void> {
    this.writing = this.writing.then(() => this.writeNow(batch));
    return this.writing;
  }

  private async writeNow(batch: AttemptOutput[]): Promise<void> {
    const { rt } = this;
    // Read when written: changes made while an earlier write was in flight go with it.
    const progressed = batch.filter((o) => o.progressChanged);
    for (const o of progressed) o.progressChanged = false;
    let stale: Set<string>;
    try {
      const refs = await rt.driver.writeAttemptOutput(
        rt.pool,
        rt.workerId,
        batch.map((o) => o.toWrite()),
        this.now(),
      );
      stale = new Set(refs.map((r) => `${r.id}/${r.attempt}`));
    } catch (e) {
      rt.logger.error(`workpool: could not write the progress and logs of ${batch.length} attempt(s) of pool "${rt.pool}"; retrying`, e);
      for (const o of progressed) o.progressChanged = true;
      for (const o of batch) if (!o.closed) this.changed(o);
      return;
    }
    for (const o of batch) if (stale.has(`${o.row.id}/${o.row.attempt}`)) this.drop(o);
    for (const o of progressed) if (!stale.has(`${o.row.id}/${o.row.attempt}`)) this.emitProgress(o);
  }

  private emitProgress(o: AttemptOutput): void {
    const { rt } = this;
    const level = workLogLevel(o.row);
    if (!rt.events.wants("progress", level)) return;
    const event: ProgressEvent = {
      event: "progress",
      pool: rt.pool,
      workId: o.row.id as WorkId,
      fnName: o.row.fnName,
      attempt: o.row.attempt,
      progress: o.progressValue()!,
    };
    if (level !== undefined) event.logLevel = level;
    rt.events.emit(event);
  }
}
