/**
 * The action attempts in flight in a run: the workload's action hands each one here when
 * it starts, and a step of the scheduler settles one as its behaviour says. An attempt
 * aborted by its worker (timeout, cancel, lost lease) leaves the list; one aborted as
 * lost is reported to the checker (`no-false-loss`).
 */
import type { AttemptRef } from "../../src/driver/driver.js";
import { AttemptAbortedError } from "../../src/internal/attempt-abort.js";
import type { Scheduler } from "./scheduler.js";
import { settleAction, type ActionCall } from "./workload.js";

/** The action attempts of one run that have not ended. */
export class Actions {
  private readonly calls: ActionCall[] = [];
  /** The newest attempt each process began of each work, by `${process} ${work id}`. */
  private readonly newest = new Map<string, number>();

  constructor(private readonly s: Scheduler) {}

  /** An attempt started (the action was called). */
  started(call: ActionCall): void {
    const { s } = this;
    this.calls.push(call);
    s.activity++;
    s.obs.started.push({ id: call.workId, attempt: call.attempt, step: s.step });
    s.trace.add(`${s.head()} ${call.procLabel} starts ${s.trace.label(call.workId)}#${call.attempt} (${call.args.b})`);
    const key = `${call.procLabel} ${call.workId}`;
    this.newest.set(key, Math.max(this.newest.get(key) ?? 0, call.attempt));
    call.signal.addEventListener(
      "abort",
      () => {
        this.drop(call);
        const why: unknown = call.signal.reason;
        if (why instanceof AttemptAbortedError && why.abortCause === "lost") {
          s.obs.lostAborts.push({ proc: call.procLabel, id: call.workId, attempt: call.attempt });
        }
      },
      { once: true },
    );
  }

  /** Whether process `proc` began an attempt of a work `refs` names newer than the one named. */
  newerBegan(proc: string, refs: readonly AttemptRef[]): boolean {
    return refs.some((r) => (this.newest.get(`${proc} ${r.id}`) ?? 0) > r.attempt);
  }

  /** Attempts a step may settle: of live processes (not paused, but in the drain), not hanging. */
  settleable(): ActionCall[] {
    const now = this.s.time.now();
    const live = new Set(
      this.s
        .live()
        .filter((p) => this.s.draining || p.pausedUntil <= now)
        .map((p) => p.label),
    );
    return this.calls.filter((a) => live.has(a.procLabel) && a.args.b !== "hang");
  }

  /** Ends an attempt as its behaviour says. */
  settle(call: ActionCall): void {
    const { s } = this;
    this.drop(call);
    s.trace.add(`${s.head()} ${call.procLabel} ends ${s.trace.label(call.workId)}#${call.attempt} (${call.args.b})`);
    settleAction(call);
  }

  private drop(call: ActionCall): void {
    const i = this.calls.indexOf(call);
    if (i >= 0) this.calls.splice(i, 1);
  }
}
