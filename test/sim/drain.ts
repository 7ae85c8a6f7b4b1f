/**
 * The drain at the end of a run: no more faults (but the holds) or application calls; the
 * processes run until every work finished and was delivered (or a bound of steps passed),
 * then the end of the run is checked.
 */
import type { Scheduler } from "./scheduler.js";

const DRAIN_STEPS = 3000;

/** Drains run `s`, then checks its end. */
export async function drain(s: Scheduler): Promise<void> {
  s.draining = true;
  s.trace.add(`${s.head()} drain`);
  // A tight rate limit lets one start in per window: its drain goes on while work starts, up to a bound.
  let [end, seen] = [DRAIN_STEPS, s.starts];
  for (let i = 0; i < end; i++) {
    if (s.rated && s.starts > seen) [end, seen] = [Math.min(i + DRAIN_STEPS, 10 * DRAIN_STEPS), s.starts];
    await drainStep(s);
    const rows = await s.endStep();
    if (!rows) continue;
    const calls = [...s.calls.values()].some((p) => !p.dead);
    const settled = rows.every((r) => r.state === "finished" && r.ocState !== "pending");
    if (!calls && settled && !s.wf?.awaitsPickup()) return s.checkEnd(rows);
  }
  s.checkEnd((await s.endStep(true))!);
}

async function drainStep(s: Scheduler): Promise<void> {
  if (!s.live().length) s.spawn();
  s.client.unpause();
  const ops = s.storeCalls.eligible();
  if (ops.length) return s.storeCalls.drainStep(s.rng.pick(ops));
  const actions = s.actions.settleable();
  if (actions.length) return s.actions.settle(s.rng.pick(actions));
  const stopped = s.live().filter((p) => !p.busy && !p.stepped && !p.started);
  if (stopped.length) return s.client.start(s.rng.pick(stopped));
  const stepped = s.live().filter((p) => !p.busy && p.stepped);
  if (stepped.length && s.rng.chance(0.5)) return s.client.runOnce(s.rng.pick(stepped));
  const next = s.time.nextTimerAt();
  // Stepped processes set no timers: under a rate limit their work waits for windows of up to seconds.
  const idle = s.rated ? 1000 : 100;
  s.time.advance(next === null ? idle : Math.max(1, next - s.time.now()));
}
