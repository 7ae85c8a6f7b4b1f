/**
 * The dashboard's JSON endpoints for workflow runs, each a thin layer over the admin API.
 * GET: the run list, counts per workflow, the versions live processes define, and one
 * run's detail; a query value that is not the number or name its field takes is a 400
 * naming the field, and nothing is read. POST (after the handler's auth, CSRF and readOnly
 * checks): cancel, restart, fork, skip and send an event; what the admin API refuses (a
 * run in the wrong state, a bad entry number) is a 400 with its reason.
 */
import type { WorkpoolAdmin } from "../admin/types.js";
import type { WorkflowListOptions, WorkflowRunOptions, WorkflowStateFilter } from "../admin/workflow-types.js";
import { checkInt, checkOptionKeys, describeValue, optionKeys, type OptionKey, type OptionKeys } from "../checks.js";
import { InvalidArgumentError } from "../errors.js";
import { UnknownWorkflowError } from "../workflow/errors.js";
import type { ApiAnswer } from "./answer.js";

const ok = (body: unknown): ApiAnswer => ({ status: 200, body });

/** A query value, or undefined when absent or empty. */
function text(query: URLSearchParams, name: string): string | undefined {
  const v = query.get(name);
  return v === null || v === "" ? undefined : v;
}

/** A query value that must be a whole number from `min` to `max` (digits only), or undefined. */
function int(query: URLSearchParams, name: string, min: number, max: number): number | undefined {
  const v = text(query, name);
  if (v === undefined) return undefined;
  if (!/^[0-9]{1,16}$/.test(v)) throw new InvalidArgumentError(name, `must be an integer from ${min} to ${max}, got ${describeValue(v)}`);
  return checkInt(name, Number(v), min, max);
}

/** The run list's filters from the query (the admin API checks their values). */
function listOptions(query: URLSearchParams): WorkflowListOptions {
  const o: WorkflowListOptions = {};
  for (const k of ["pool", "name", "version", "parentId", "cursor"] as const) {
    const v = text(query, k);
    if (v !== undefined) o[k] = v;
  }
  const state = text(query, "state");
  if (state !== undefined) o.state = state as WorkflowStateFilter;
  const createdAfter = int(query, "createdAfter", 0, 8.64e15);
  if (createdAfter !== undefined) o.createdAfter = createdAfter;
  const createdBefore = int(query, "createdBefore", 0, 8.64e15);
  if (createdBefore !== undefined) o.createdBefore = createdBefore;
  const limit = int(query, "limit", 1, 500);
  if (limit !== undefined) o.limit = limit;
  return o;
}

/** GET endpoints for workflow runs, by name (the path after `api/`); null for a name that is not one of them. */
export function workflowReadEndpoint(admin: WorkpoolAdmin, name: string, query: URLSearchParams): Promise<ApiAnswer> | null {
  switch (name) {
    case "workflows":
      return admin.workflows(listOptions(query)).then(ok);
    case "workflow-counts":
      return admin.workflowCounts(text(query, "pool")).then((counts) => ok({ counts }));
    case "workflow-versions":
      return admin.workflowVersions(text(query, "pool")).then((versions) => ok({ versions }));
    case "workflow-run": {
      const options: WorkflowRunOptions = {};
      const stepsFrom = int(query, "stepsFrom", 0, 1e9);
      if (stepsFrom !== undefined) options.stepsFrom = stepsFrom;
      const stepsLimit = int(query, "stepsLimit", 1, 1000);
      if (stepsLimit !== undefined) options.stepsLimit = stepsLimit;
      return admin
        .workflowRun(query.get("id") ?? "", options)
        .then((run) => (run === null ? { status: 404, body: { error: "no workflow run with this id" } } : ok(run)));
    }
    default:
      return null;
  }
}

/** The JSON body of each workflow action, by name. */
interface WorkflowActionBodies {
  "workflow-cancel": { id: string };
  "workflow-restart": { id: string; from: number };
  "workflow-fork": { id: string; from: number; workflowId?: string };
  "workflow-skip": { id: string };
  "workflow-send-event": { id: string; name: string; payload?: unknown };
}

const BODY_KEYS: { readonly [A in keyof WorkflowActionBodies]: OptionKeys<OptionKey<WorkflowActionBodies[A]>> } = {
  "workflow-cancel": optionKeys<WorkflowActionBodies["workflow-cancel"]>()({ id: true }),
  "workflow-restart": optionKeys<WorkflowActionBodies["workflow-restart"]>()({ id: true, from: true }),
  "workflow-fork": optionKeys<WorkflowActionBodies["workflow-fork"]>()({ id: true, from: true, workflowId: true }),
  "workflow-skip": optionKeys<WorkflowActionBodies["workflow-skip"]>()({ id: true }),
  "workflow-send-event": optionKeys<WorkflowActionBodies["workflow-send-event"]>()({ id: true, name: true, payload: true }),
};

const UNKNOWN_RUN: ApiAnswer = { status: 404, body: { error: "no workflow run with this id" } };

/**
 * Runs an admin action: an unknown run is a 404, and a refusal that names an option
 * (`options.from`) names the body's field (`from`) instead.
 */
async function operate(action: () => Promise<unknown>, answer: (value: unknown) => unknown): Promise<ApiAnswer> {
  try {
    return ok(answer(await action()));
  } catch (e) {
    if (e instanceof UnknownWorkflowError) return UNKNOWN_RUN;
    if (e instanceof InvalidArgumentError && e.field.startsWith("options.")) {
      const field = e.field.slice("options.".length);
      throw new InvalidArgumentError(field, e.message.replace(/^workpool: [^:]+: /, ""));
    }
    throw e;
  }
}

/** Cancels a run (and so its child runs); when nothing was canceled, reads the run again to say why. */
async function cancelRun(admin: WorkpoolAdmin, id: string): Promise<ApiAnswer> {
  if (await admin.cancelWorkflow(id)) return ok({ canceled: true });
  const run = await admin.workflow(id);
  if (run === null) return UNKNOWN_RUN;
  const why = run.cancelRequested ? "its cancel was already requested" : `it already ended (${run.state})`;
  return ok({ canceled: false, reason: why });
}

/** POST actions on workflow runs, by name; `body` is the parsed JSON object, checked whole first. Null for another name. */
export function workflowActionEndpoint(admin: WorkpoolAdmin, name: string, body: unknown): Promise<ApiAnswer> | null {
  const keys = <A extends keyof WorkflowActionBodies>(action: A) =>
    checkOptionKeys("body", body, BODY_KEYS[action], `the ${name} action`, "body.");
  switch (name) {
    case "workflow-cancel":
      return cancelRun(admin, keys(name).id as string);
    case "workflow-restart": {
      const b = keys(name);
      return operate(
        () => admin.restartWorkflow(b.id as string, { from: b.from as number }),
        () => ({ done: true }),
      );
    }
    case "workflow-fork": {
      const b = keys(name);
      const options =
        b.workflowId === undefined ? { from: b.from as number } : { from: b.from as number, workflowId: b.workflowId as string };
      return operate(
        () => admin.forkWorkflow(b.id as string, options),
        (newId) => ({ newId }),
      );
    }
    case "workflow-skip":
      return operate(
        () => admin.skipWorkflowStep(keys(name).id as string),
        () => ({ done: true }),
      );
    case "workflow-send-event": {
      const b = keys(name);
      return operate(
        () => admin.sendWorkflowEvent(b.id as string, b.name as string, b.payload),
        () => ({ sent: true }),
      );
    }
    default:
      return null;
  }
}
