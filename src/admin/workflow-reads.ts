/**
 * The admin API's reads of workflow runs: a keyset-paginated list with filters, counts by
 * state, and one run with its journal, child runs and events. Input is checked first (an
 * InvalidArgumentError naming the field); reads need no workflow definitions.
 */
import { checkInt, checkName, checkOptionKeys, describeValue, optionKeys } from "../checks.js";
import type { Driver } from "../driver/driver.js";
import type { RunListRow, RunQuery, RunState } from "../driver/workflow-ops.js";
import { InvalidArgumentError } from "../errors.js";
import type { JsonValue } from "../types.js";
import { toStatus, toStepInfo } from "../workflow/outcomes.js";
import type { BlockedInfo } from "../workflow/types.js";
import { checkWorkflowId } from "../workflow/validate.js";
import { checkPool } from "./validate.js";
import type {
  WorkflowCounts,
  WorkflowListOptions,
  WorkflowListPage,
  WorkflowRunDetail,
  WorkflowRunOptions,
  WorkflowStateFilter,
  WorkflowStepDetail,
  WorkflowSummary,
} from "./workflow-types.js";

const STATES: Record<WorkflowStateFilter, readonly RunState[]> = {
  running: ["running", "canceling"],
  canceling: ["canceling"],
  blocked: ["blocked"],
  success: ["success"],
  failed: ["failed"],
  canceled: ["canceled"],
  finished: ["success", "failed", "canceled"],
  unfinished: ["running", "canceling", "blocked"],
};
const LIST_KEYS = optionKeys<WorkflowListOptions>()({
  pool: true,
  name: true,
  state: true,
  version: true,
  parentId: true,
  createdAfter: true,
  createdBefore: true,
  limit: true,
  cursor: true,
});
const RUN_KEYS = optionKeys<WorkflowRunOptions>()({ stepsFrom: true, stepsLimit: true });
/** Most child runs and events a run's detail carries, and the open sleeps whose due time it reads. */
const DETAIL_CHILDREN = 100;
const DETAIL_EVENTS = 200;
const DETAIL_WAKES = 100;

/** admin.workflows(): a page of runs matching `query` (from checkWorkflowList()), newest first. */
export async function listPage<Tx>(driver: Driver<Tx>, query: RunQuery): Promise<WorkflowListPage> {
  const rows = await driver.workflows().listRuns({ ...query, limit: query.limit + 1 });
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  return {
    items: page.map(toSummary),
    cursor: rows.length > query.limit && last ? encodeCursor(last.createdAt, last.id) : null,
  };
}

/** admin.workflowCounts(): runs by pool (null: every pool) and workflow, counted by state. */
export async function countWorkflows<Tx>(driver: Driver<Tx>, name: string | null): Promise<WorkflowCounts[]> {
  const byWorkflow = new Map<string, WorkflowCounts>();
  for (const c of await driver.workflows().countRuns(name)) {
    const id = JSON.stringify([c.pool, c.name]);
    let counts = byWorkflow.get(id);
    if (!counts) byWorkflow.set(id, (counts = { pool: c.pool, name: c.name, running: 0, blocked: 0, success: 0, failed: 0, canceled: 0 }));
    counts[c.state === "canceling" ? "running" : c.state] += c.count;
  }
  return [...byWorkflow.values()];
}

/** workflowRun()'s id and options, checked. */
export function checkWorkflowRun(id: unknown, options: unknown): { runId: string; from: number; limit: number } {
  const runId = checkWorkflowId("id", id);
  const o = (options === undefined ? {} : checkOptionKeys("options", options, RUN_KEYS, "workflowRun()")) as WorkflowRunOptions;
  const from = o.stepsFrom === undefined ? 0 : checkInt("options.stepsFrom", o.stepsFrom, 0, 1e9);
  const limit = o.stepsLimit === undefined ? 500 : checkInt("options.stepsLimit", o.stepsLimit, 1, 1000);
  return { runId, from, limit };
}

/** admin.workflowRun(): a run with part of its journal, its first child runs and its newest events; null if unknown. */
export async function readWorkflowRun<Tx>(
  driver: Driver<Tx>,
  { runId, from, limit }: ReturnType<typeof checkWorkflowRun>,
): Promise<WorkflowRunDetail | null> {
  const wf = driver.workflows();
  const run = await wf.readRun(runId);
  if (!run) return null;
  const entries = await wf.readSteps(runId, from);
  const steps: WorkflowStepDetail[] = entries.slice(0, limit).map(toStepInfo);
  await addWakeTimes(driver, steps);
  const children = await listPage(driver, { ...noFilter(), parentId: runId, limit: DETAIL_CHILDREN });
  const events = (await wf.readEvents(runId, DETAIL_EVENTS)).map((e) => ({
    seq: e.seq,
    name: e.name,
    payload: JSON.parse(e.payload) as JsonValue,
    sentAt: e.sentAt,
    consumedStep: e.consumedStep,
  }));
  const status = toStatus(run);
  const detail: WorkflowRunDetail = {
    run: {
      ...toSummary({ ...run, error: null }),
      args: JSON.parse(run.args) as JsonValue,
      onComplete:
        run.onComplete === null
          ? null
          : { handler: run.onComplete, state: run.ocState, failedAttempts: run.ocAttempts, error: run.ocError },
      deadline: run.deadline,
      parentStep: run.parentStep,
    },
    steps,
    nextStep: entries.length > limit ? from + limit : null,
    children,
    events,
  };
  if (status.result !== undefined) detail.run.result = status.result;
  if (status.error !== undefined) detail.run.error = status.error;
  if (run.context !== null) detail.run.context = JSON.parse(run.context) as JsonValue;
  return detail;
}

/** Open sleeps (and event waits with a timeout) get the time their work is due. */
async function addWakeTimes<Tx>(driver: Driver<Tx>, steps: WorkflowStepDetail[]): Promise<void> {
  const waiting = steps.filter((s) => (s.kind === "sleep" || s.kind === "event") && s.workId !== undefined && s.finishedAt === null);
  for (const step of waiting.slice(0, DETAIL_WAKES)) {
    const work = await driver.readWorkDetail(step.workId!);
    if (work && work.state === "pending") step.wakeAt = work.runAt;
  }
}

function toSummary(r: RunListRow): WorkflowSummary {
  const summary: WorkflowSummary = {
    workflowId: r.id,
    pool: r.pool,
    name: r.name,
    version: r.version,
    state: r.state === "canceling" ? "running" : r.state,
    cancelRequested: r.state === "canceling",
    steps: r.steps,
    journalBytes: r.journalBytes,
    parentId: r.parentId,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    finishedAt: r.finishedAt,
  };
  if (r.error !== null) summary.error = r.error;
  if (r.blocked !== null) summary.blocked = JSON.parse(r.blocked) as BlockedInfo;
  return summary;
}

function noFilter(): RunQuery {
  return {
    pool: null,
    name: null,
    states: null,
    version: null,
    parentId: null,
    createdAfter: null,
    createdBefore: null,
    after: null,
    limit: 50,
  };
}

/** workflows()' options as a driver query. */
export function checkWorkflowList(options: unknown): RunQuery {
  const o = (options === undefined ? {} : checkOptionKeys("options", options, LIST_KEYS, "workflows()")) as WorkflowListOptions;
  const q = noFilter();
  if (o.pool !== undefined) q.pool = checkPool(o.pool);
  if (o.name !== undefined) q.name = checkName("name", o.name, 200);
  if (o.state !== undefined) {
    if (typeof o.state !== "string" || !Object.hasOwn(STATES, o.state))
      throw new InvalidArgumentError("state", `must be one of ${Object.keys(STATES).join(", ")}, got ${describeValue(o.state)}`);
    q.states = STATES[o.state];
  }
  if (o.version !== undefined) q.version = checkName("version", o.version, 100);
  if (o.parentId !== undefined) q.parentId = checkWorkflowId("parentId", o.parentId);
  if (o.createdAfter !== undefined) q.createdAfter = checkTime("createdAfter", o.createdAfter);
  if (o.createdBefore !== undefined) q.createdBefore = checkTime("createdBefore", o.createdBefore);
  if (q.createdAfter !== null && q.createdBefore !== null && q.createdAfter >= q.createdBefore)
    throw new InvalidArgumentError("createdBefore", `must be after createdAfter (${q.createdAfter}), got ${q.createdBefore}`);
  if (o.limit !== undefined) q.limit = checkInt("limit", o.limit, 1, 500);
  if (o.cursor !== undefined) q.after = decodeCursor(o.cursor);
  return q;
}

function checkTime(field: string, value: unknown): number {
  return checkInt(field, value, 0, 8.64e15);
}

function encodeCursor(createdAt: number, id: string): string {
  return Buffer.from(JSON.stringify([createdAt, id])).toString("base64url");
}

function decodeCursor(cursor: unknown): { createdAt: number; id: string } {
  const bad = (): never => {
    throw new InvalidArgumentError("cursor", `must be the cursor of a previous workflows() page, got ${describeValue(cursor)}`);
  };
  if (typeof cursor !== "string" || cursor.length > 400) return bad();
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(value) && value.length === 2 && Number.isSafeInteger(value[0]) && typeof value[1] === "string") {
      return { createdAt: value[0] as number, id: checkWorkflowId("cursor", value[1]) };
    }
  } catch {
    // Not base64url JSON: refused below.
  }
  return bad();
}
