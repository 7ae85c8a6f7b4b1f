/**
 * Two checks of a pool's workflows on their own: `events-once` (each event is taken by at
 * most one wait, each wait takes at most one, in the order sent) after every step, and,
 * after the drain, that every run ended, is blocked, or waits for an event never sent
 * (`nothing-lost`: nothing is left to drive a run that still runs).
 */
import type { WfEntry, WfEvent, WfRun, WfSnapshot } from "./wf-rows.js";
import { Violation } from "./violation.js";

const FINISHED = new Set(["success", "failed", "canceled"]);

/** The parsed outcome of an entry, or null. */
export function outcomeOf(e: WfEntry): { kind: string; value?: unknown; by?: string; error?: string } | null {
  return e.outcome === null ? null : (JSON.parse(e.outcome) as { kind: string; value?: unknown; by?: string });
}

/** Groups a snapshot's entries and events by run. */
export function byRun<T extends { runId: string }>(rows: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const list = out.get(r.runId) ?? [];
    list.push(r);
    out.set(r.runId, list);
  }
  return out;
}

/**
 * events-once for one run: an event consumed names a wait for its name that got its
 * payload; no two events name the same wait; a wait that got an event names it; of each
 * name, the events consumed are the oldest ones, taken by waits in call order (not held to
 * once a skip gave back the event of the entry it dropped: a later wait takes that one).
 */
export function checkEvents(
  run: string,
  entries: readonly WfEntry[],
  events: readonly WfEvent[],
  label: (id: string) => string,
  inOrder = true,
): void {
  const entryAt = new Map(entries.map((e) => [e.n, e]));
  const taker = new Map<number, WfEvent>();
  for (const ev of events) {
    if (ev.consumedStep === null) continue;
    const other = taker.get(ev.consumedStep);
    if (other)
      throw new Violation(
        "events-once",
        `run ${label(run)}: events #${other.seq} and #${ev.seq} were both taken by step ${ev.consumedStep}`,
      );
    taker.set(ev.consumedStep, ev);
    const e = entryAt.get(ev.consumedStep);
    const got = e && outcomeOf(e);
    if (!e || e.kind !== "event" || e.name !== ev.name)
      throw new Violation(
        "events-once",
        `run ${label(run)}: event #${ev.seq} (${ev.name}) was taken by step ${ev.consumedStep}, no wait for it`,
      );
    if (got && (got.kind !== "event" || JSON.stringify(got.value) !== JSON.stringify(JSON.parse(ev.payload)))) {
      throw new Violation(
        "events-once",
        `run ${label(run)}: step ${e.n} took event #${ev.seq} ${ev.payload} but its outcome is ${e.outcome ?? "none"}`,
      );
    }
  }
  for (const e of entries) {
    if (e.kind === "event" && outcomeOf(e)?.kind === "event" && !taker.has(e.n))
      throw new Violation("events-once", `run ${label(run)}: step ${e.n} got an event (${e.outcome ?? ""}) that no event row says it took`);
  }
  if (!inOrder) return;
  const names = new Set(events.map((e) => e.name));
  for (const name of names) {
    let open = false;
    let lastStep = -1;
    for (const ev of events.filter((x) => x.name === name).sort((a, b) => a.seq - b.seq)) {
      if (ev.consumedStep === null) {
        open = true;
        continue;
      }
      if (open) throw new Violation("events-once", `run ${label(run)}: event #${ev.seq} (${name}) was taken while an older one was left`);
      if (ev.consumedStep <= lastStep)
        throw new Violation(
          "events-once",
          `run ${label(run)}: event #${ev.seq} (${name}) went to step ${ev.consumedStep}, before an older event's step`,
        );
      lastStep = ev.consumedStep;
    }
  }
}

/**
 * journal-size: a run's journal size, as its row counts it (what maxJournalBytes caps), is
 * its entries' args and the outcomes given to its function (entries marked delivered).
 */
export function checkJournalSize(run: WfRun, entries: readonly WfEntry[], label: (id: string) => string): void {
  const size = entries.reduce((sum, e) => sum + (e.args?.length ?? 0) + (e.delivered === null ? 0 : (e.outcome?.length ?? 0)), 0);
  if (run.journalBytes !== size)
    throw new Violation("journal-size", `run ${label(run.id)} counts ${run.journalBytes} journal bytes; its entries hold ${size}`);
}

/**
 * After the drain (every work finished): each run has ended (its onComplete delivered), is
 * blocked, waits only for events never sent (or for a child run that does), or is pinned
 * to a version no live process defines (`undriven`); none runs with an outcome it was
 * never given or a step nothing will end.
 */
export function checkWfEnd(wf: WfSnapshot, label: (id: string) => string, undriven: (run: WfRun) => boolean = () => false): void {
  const runs = new Map(wf.runs.map((r) => [r.id, r]));
  const entries = byRun(wf.entries);
  const events = byRun(wf.events);
  const waiting = (run: WfRun, seen: Set<string>): string | null => {
    if (run.state === "blocked" || undriven(run)) return null;
    if (run.state !== "running") return `is ${run.state}`;
    if (seen.has(run.id)) return null;
    seen.add(run.id);
    const own = entries.get(run.id) ?? [];
    const open = own.filter((e) => e.state === "running" || e.state === "waiting");
    const undelivered = own.find((e) => e.outcome !== null && e.delivered === null);
    if (undelivered) return `has the outcome of step ${undelivered.n} (${undelivered.kind}), never given to its function`;
    if (!open.length) return "has no open step, but its function did not end";
    for (const e of open) {
      if (e.kind === "event") {
        const sent = (events.get(run.id) ?? []).find((ev) => ev.name === e.name && ev.consumedStep === null);
        if (sent) return `waits at step ${e.n} for event ${e.name}, but event #${sent.seq} was sent and never taken`;
        continue;
      }
      const child = e.kind === "workflow" && e.childId !== null ? runs.get(e.childId) : undefined;
      if (!child) return `waits on step ${e.n} (${e.kind} ${e.name}), which nothing will end`;
      const why = waiting(child, seen);
      if (why) return `waits on child ${label(child.id)}, which ${why}`;
    }
    return null;
  };
  for (const run of wf.runs) {
    if (FINISHED.has(run.state)) {
      if (run.onComplete !== null && run.ocState !== "done")
        throw new Violation(
          "wf-on-complete-once",
          `run ${label(run.id)} finished ${run.state} with onComplete ${run.ocState} after the drain`,
        );
      continue;
    }
    const why = waiting(run, new Set());
    if (why) throw new Violation("nothing-lost", `run ${label(run.id)} ${why} after the drain`);
  }
}
