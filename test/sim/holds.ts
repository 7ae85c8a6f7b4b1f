/**
 * The holds of a run: faults of timing, not of outcome (FaultKind "hold" and
 * "holdHeartbeat"). They are drawn from a stream of their own, in about half the runs
 * with faults, so a run without them is the run its seed made before they existed.
 *
 * - `hold`: a call for which the store reads the clock (a claim, alone, with completions
 *   or on insert, and a heartbeat), or a workflow advance's commit, is made, then stopped at the gate in front of the real
 *   driver (store-gate.ts) for a while of simulated time, sometimes longer than the lease:
 *   a wait for the SQLite write lock or a free PostgreSQL connection. A driver that read
 *   the time before that wait starts stale leases and records stale starts.
 * - `holdHeartbeat`: a heartbeat waits in the queue until this process began a newer
 *   attempt of a work it names (or a lease has passed), so its answer about the older
 *   attempt arrives while the newer one runs. Retries without backoff (in the same runs)
 *   make the newer attempt begin at once, often in the completion that ends the older.
 *
 * - `holdAdvance`: a workflow advance's commit waits in the queue until another advance
 *   of the same run has read its journal (or a lease has passed), so two advances that
 *   read the same generation race to commit.
 *
 * All fit the scheduler's one store call per step: a held call has not touched the store
 * when its step ends, and reaches it in the later step that runs it, alone.
 */
import type { FaultKind, SimOp } from "./faulty-driver.js";
import type { Rng } from "./rng.js";
import type { Scheduler } from "./scheduler.js";
import { StoreGate } from "./store-gate.js";

/** The holds of one run. */
export class Holds {
  /** The gate the run's calls pass on their way to the real driver. */
  readonly gate = new StoreGate();

  constructor(
    private readonly s: Scheduler,
    private readonly rng: Rng,
    /** Whether this run holds calls at all. */
    readonly on: boolean,
  ) {}

  /**
   * Maybe holds `op`, which a step picked; returns whether it did (the step is then over).
   * The drain holds calls too: it settles actions only once no call is left, so without a
   * hold no heartbeat there outlives its attempt. Every hold ends within two leases of
   * simulated time, so the drain still ends.
   */
  maybeHold(op: SimOp): boolean {
    const { s, rng } = this;
    if (!this.on || s.faultRate === 0 || op.holdDrawn || !op.timed) return false;
    op.holdDrawn = true;
    const allowed = (f: FaultKind): boolean => s.options.faults.includes(f);
    const { leaseMs } = s.config;
    const now = s.time.now();
    // Most heartbeats come while attempts end and begin: half of them wait for a newer attempt.
    if (op.refs !== null && allowed("holdHeartbeat") && rng.chance(0.5)) {
      const refs = op.refs!;
      op.waitFor = () => s.actions.newerBegan(op.proc.label, refs) || s.time.now() >= now + leaseMs;
      s.trace.add(
        `${s.head()} ${op.proc.label} heartbeat held for a newer attempt (${refs.map((r) => `${s.trace.label(r.id)}#${r.attempt}`).join(" ")})`,
      );
      return true;
    }
    // Two advances of one run that read the same generation: the first to commit wins, the other's commit is refused.
    if (op.advance && allowed("holdAdvance") && rng.chance(0.5)) {
      const run = op.advance;
      const reads = s.advanceReads(run);
      op.waitFor = () => s.advanceReads(run) > reads || s.time.now() >= now + leaseMs;
      s.trace.add(`${s.head()} ${op.proc.label} advance of run ${s.trace.runLabel(run)} held for another advance's read`);
      return true;
    }
    if (!allowed("hold") || !rng.chance(0.3)) return false;
    const ms = rng.chance(0.4) ? leaseMs + rng.int(1, leaseMs) : rng.int(1, leaseMs / 2);
    const { held } = this.gate.hold(() => op.run(null));
    // Every driver wrapper calls the driver as soon as it is called: a call that got past the gate is a simulator bug.
    if (!held) throw new Error(`sim: ${op.method} of ${op.proc.label} made no store call to hold`);
    op.held = held;
    op.notBefore = now + ms;
    s.trace.add(`${s.head()} ${op.proc.label} ${op.method} held at the store for ${ms} ms`);
    return true;
  }
}
