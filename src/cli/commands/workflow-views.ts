/**
 * How `workpool workflows ls` and `workpool workflows show` print runs: a table of runs, and
 * one run in full (its fields, its journal, its child runs and the events no wait took yet).
 * Every value from the store goes through terminal-text.ts.
 */
import type { WorkflowEventInfo, WorkflowRunDetail, WorkflowStepDetail, WorkflowSummary } from "../../admin/workflow-types.js";
import type { BlockedInfo, StepCallInfo } from "../../workflow/types.js";
import { ago, block, table, when } from "../format.js";
import { joinShown, jsonText, t, type Colors, type Printable, type Shown } from "../terminal-text.js";

/** A run's state as a person reads it: `canceling` while a cancel takes effect, coloured by outcome. */
export function runState(r: Pick<WorkflowSummary, "state" | "cancelRequested">, c: Colors): Printable {
  if (r.cancelRequested) return c.yellow("canceling");
  switch (r.state) {
    case "success":
      return c.green("success");
    case "failed":
      return c.red("failed");
    case "blocked":
      return c.yellow("blocked");
    case "canceled":
      return c.dim("canceled");
    case "running":
      return c.cyan("running");
  }
}

/** Runs as a table, newest first as listed. */
export function runsTable(items: readonly WorkflowSummary[], c: Colors, now: number): Shown {
  return table(
    ["id", "pool", "name", "version", "state", "steps", "created", "finished", "parent"],
    items.map((r) => [
      r.workflowId,
      r.pool,
      r.name,
      r.version ?? "-",
      runState(r, c),
      r.steps,
      ago(r.createdAt, now),
      ago(r.finishedAt, now),
      r.parentId ?? "-",
    ]),
  );
}

function compactJson(value: unknown): Printable {
  return value === undefined ? "-" : jsonText(value, 0);
}

function call(info: StepCallInfo | null): string {
  return info === null ? "no call" : info.kind === info.name ? info.kind : `${info.kind} "${info.name}"`;
}

/** "entry 1: the code calls event "go", the journal has action "b"". */
export function blockedText(b: BlockedInfo): Shown {
  return t`entry ${b.n}: the code calls ${call(b.expected)}, the journal has ${call(b.recorded)}`;
}

/** What an entry ended with: its result or error, or how long it still waits. */
function outcome(s: WorkflowStepDetail, c: Colors, now: number): Printable {
  if (s.error !== undefined) return c.red(s.error);
  if (s.result !== undefined) return compactJson(s.result);
  if (s.wakeAt !== undefined) return t`due ${ago(s.wakeAt, now)}`;
  return "-";
}

function stepState(s: WorkflowStepDetail, c: Colors): Printable {
  if (s.state === "failed") return c.red("failed");
  if (s.state === "running" || s.state === "waiting") return c.cyan(s.state);
  return s.state === "canceled" ? c.dim("canceled") : s.state;
}

/** The journal as a table: one row per entry. */
function journalTable(steps: readonly WorkflowStepDetail[], c: Colors, now: number): Shown {
  return table(
    ["n", "kind", "name", "state", "started", "finished", "args", "outcome", "work / child"],
    steps.map((s) => [
      s.n,
      s.kind,
      s.kind === s.name ? "-" : s.name,
      stepState(s, c),
      ago(s.startedAt, now),
      ago(s.finishedAt, now),
      compactJson(s.args),
      outcome(s, c, now),
      s.workId ?? s.childId ?? "-",
    ]),
  );
}

function eventsTable(events: readonly WorkflowEventInfo[], now: number): Shown {
  return table(
    ["seq", "name", "sent", "payload"],
    events.map((e) => [e.seq, e.name, ago(e.sentAt, now), compactJson(e.payload)]),
  );
}

/** The run's fields, one per line. */
function runBlock(d: WorkflowRunDetail, c: Colors, now: number): Shown {
  const r = d.run;
  const pairs: [string, Printable][] = [
    ["ID", r.workflowId],
    ["Pool", r.pool],
    ["Workflow", r.name],
    ["Version", r.version ?? "-"],
    ["State", runState(r, c)],
  ];
  if (r.blocked) pairs.push(["Blocked at", blockedText(r.blocked)]);
  pairs.push(
    ["Steps", `${r.steps} (${r.journalBytes} bytes)`],
    ["Parent", r.parentId === null ? "-" : t`${r.parentId} (entry ${r.parentStep ?? "-"})`],
    ["Created", when(r.createdAt, now)],
    ["Updated", when(r.updatedAt, now)],
    ["Finished", when(r.finishedAt, now)],
    ["Deadline", when(r.deadline, now)],
    ["Args", compactJson(r.args)],
  );
  if (r.state === "success") pairs.push(["Result", compactJson(r.result)]);
  if (r.error !== undefined) pairs.push(["Error", c.red(r.error)]);
  if (r.onComplete) {
    const oc = r.onComplete;
    const tries = oc.failedAttempts ? `, ${oc.failedAttempts} failed tries` : "";
    pairs.push(["onComplete", t`${oc.handler}: ${oc.state}${tries}${oc.error ? t` (${oc.error})` : ""}`]);
    pairs.push(["Context", compactJson(r.context)]);
  }
  return block(pairs);
}

/** One run in full: its fields, its journal, its child runs, and the events not taken yet. */
export function runDetail(d: WorkflowRunDetail, c: Colors, now: number): Shown {
  const parts: Shown[] = [runBlock(d, c, now)];
  const from = d.steps[0]?.n ?? 0;
  const heading = d.nextStep === null && from === 0 ? "Journal" : `Journal, entries ${from} to ${from + d.steps.length - 1}`;
  parts.push(d.steps.length ? t`${c.bold(heading)}\n${journalTable(d.steps, c, now)}` : t`${c.bold("Journal")}\nno entries`);
  if (d.nextStep !== null) parts.push(c.dim(`more entries from ${d.nextStep}: --steps-from ${d.nextStep}`));
  if (d.children.items.length) {
    const more = d.children.cursor ? c.dim(" (the newest; `workpool workflows ls --parent` lists them all)") : "";
    parts.push(t`${c.bold("Child runs")}${more}\n${runsTable(d.children.items, c, now)}`);
  }
  const waiting = d.events.filter((e) => e.consumedStep === null);
  if (waiting.length) parts.push(t`${c.bold("Events not taken yet")}\n${eventsTable(waiting, now)}`);
  return joinShown(parts, "\n\n");
}
