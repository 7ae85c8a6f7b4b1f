/**
 * The store calls of a run's processes: every call a process makes waits in this queue
 * until the scheduler picks it, then runs on the real store with the fault the seed
 * drew for it (see FaultKind). One call runs at a time, to its end.
 */
import type { AttemptRef, WorkRow } from "../../src/driver/driver.js";
import { CALL_FAULTS, type FaultKind, type NewOp, type ProcHandle, type SimOp } from "./faulty-driver.js";
import type { SimProcess } from "./process.js";
import type { Scheduler } from "./scheduler.js";
import type { Trace } from "./trace.js";
import { Violation } from "./violation.js";

/** Store calls after which the store would signal waiting workers (insert, config change). */
const WAKES = new Set(["insertWork", "insertAndClaim", "ensurePool"]);
/** Longest real time one store call may take before the run counts as deadlocked. */
const CALL_DEADLINE_MS = 15_000;

/** The queued store calls of one run and the processes' wake-up callbacks. */
export class StoreCalls {
  /** Faults injected so far. */
  faults = 0;
  /** Set when a call ran since the scheduler last read the rows. */
  wrote = false;
  private ops: SimOp[] = [];
  private seq = 0;
  private wakers: { proc: ProcHandle; onWake: () => void }[] = [];

  constructor(private readonly s: Scheduler) {}

  /** Queues a call of a process. */
  queue(op: NewOp): void {
    this.ops.push({ ...op, seq: this.seq++, notBefore: 0, waitFor: null, held: null, holdDrawn: false });
    (op.proc as SimProcess).zeroTimers = 0;
    this.s.activity++;
  }

  /** Registers a wake-up callback of a process (the store's own signals are not used). */
  subscribe(proc: ProcHandle, onWake: () => void): () => void {
    const w = { proc, onWake };
    this.wakers.push(w);
    return () => (this.wakers = this.wakers.filter((x) => x !== w));
  }

  /** Forgets the calls and callbacks of a process that died. */
  drop(proc: ProcHandle): void {
    this.ops = this.ops.filter((o) => o.proc !== proc);
    this.wakers = this.wakers.filter((w) => w.proc !== proc);
  }

  /** Forgets everything (the run is over). */
  clear(): void {
    this.ops = [];
    this.wakers = [];
  }

  /** Calls that may run now: not of a paused process, not a held one (in the drain, all but the held ones). */
  eligible(): SimOp[] {
    const now = this.s.time.now();
    const held = (o: SimOp): boolean => {
      const p = o.proc as SimProcess;
      return (
        o.notBefore > now ||
        p.pausedUntil > now ||
        (o.method === "heartbeat" && p.heartbeatsHeldUntil > now) ||
        (o.waitFor !== null && !o.waitFor())
      );
    };
    if (this.s.draining) return this.ops.filter((o) => (o.held === null || o.notBefore <= now) && (o.waitFor === null || o.waitFor()));
    return this.ops.filter((o) => !held(o));
  }

  /** One random step's call: maybe a hold (holds.ts), maybe a delayed heartbeat, maybe a fault. */
  async step(op: SimOp): Promise<void> {
    const { rng, faultRate } = this.s;
    if (this.s.holds.maybeHold(op)) {
      this.faults++;
      return;
    }
    if (op.method === "heartbeat" && faultRate > 0 && rng.chance(0.2)) {
      op.notBefore = this.s.time.now() + this.s.config.leaseMs * (1 + rng.next());
      this.s.trace.add(`${this.s.head()} ${op.proc.label} heartbeat delayed`);
      return;
    }
    let fault: FaultKind | null = null;
    if (faultRate > 0 && rng.chance(faultRate)) {
      const { faults, processFaults } = this.s.options;
      const allowed = faults.filter((f) => CALL_FAULTS.includes(f) && (processFaults || !f.startsWith("crash")));
      if (allowed.length) fault = rng.pick(allowed);
      if (fault === "crashInside" && op.method !== "transaction") fault = "crashBefore";
    }
    await this.execute(op, fault);
  }

  /** One drain step's call: maybe a hold, never a fault. */
  async drainStep(op: SimOp): Promise<void> {
    if (this.s.holds.maybeHold(op)) {
      this.faults++;
      return;
    }
    await this.execute(op, null);
  }

  /** Runs one queued call with `fault`. */
  async execute(op: SimOp, fault: FaultKind | null): Promise<void> {
    const s = this.s;
    this.ops = this.ops.filter((o) => o !== op);
    if (op.proc.dead) return;
    if (fault) this.faults++;
    this.wrote = true;
    const what = `${s.head()} ${op.proc.label} ${op.method}${fault ? ` !${fault}` : ""}`;
    if (fault === "crashBefore") return s.kill(op.proc, `before ${op.method}`);
    if (fault === "failBefore" || fault === "dropBefore") {
      s.trace.add(`${what} → error`);
      return op.reject(fault === "failBefore" ? new Error(`sim: ${op.method} failed`) : s.store.connectionError());
    }
    const crashAt = fault === "crashInside" ? s.rng.int(1, 4) : null;
    let failed = false;
    let value: unknown;
    try {
      // A held call was made already: it goes on from the gate to the store.
      value = await deadline(op.held ? op.held.release() : op.run(crashAt), `${op.proc.label} ${op.method}`);
    } catch (e) {
      if (e instanceof Violation) throw e;
      failed = true;
      value = e;
    }
    s.trace.add(
      `${what} → ${failed ? `error ${s.trace.shown(String((value as Error)?.message ?? value)).slice(0, 80)}` : summary(op.method, value, s.trace)}`,
    );
    if (!failed && (WAKES.has(op.method) || op.wakes?.())) for (const w of [...this.wakers]) if (!w.proc.dead) w.onWake();
    if (fault === "crashAfter" || fault === "crashInside") return s.kill(op.proc, `after ${op.method}`);
    if (fault === "failAfter") return op.reject(new Error(`sim: the answer to ${op.method} was lost`));
    if (fault === "dropAfter") return op.reject(s.store.connectionError());
    if (failed) op.reject(value);
    else op.resolve(value);
  }
}

/** A short text of a store call's answer. */
function summary(method: string, value: unknown, trace: Trace): string {
  const answer = value as { claimed?: WorkRow[]; claim?: { claimed: WorkRow[] } | null; lost?: AttemptRef[] } | null;
  if (method === "heartbeat" && answer?.lost?.length)
    return `lost ${answer.lost.map((r) => `${trace.label(r.id)}#${r.attempt}`).join(" ")}`;
  // complete() claims inside its own answer.
  const claimed = answer?.claimed ?? answer?.claim?.claimed;
  if (Array.isArray(claimed)) return claimed.length ? `claimed ${claimed.map((r) => `${trace.label(r.id)}#${r.attempt}`).join(" ")}` : "ok";
  if (method === "insertWork" && Array.isArray(value)) return `ok ${value.map((id) => trace.label(String(id))).join(" ")}`;
  if (method === "insertAndClaim" && value) return `claimed ${trace.label((value as WorkRow).id)}`;
  return "ok";
}

/** Fails the run when a store call does not answer in real time: a deadlock. */
async function deadline<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Violation("nothing-lost", `${what} did not answer in ${CALL_DEADLINE_MS} ms (deadlock)`)),
      CALL_DEADLINE_MS,
    );
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}
