/**
 * The browser side of the dashboard's JSON API: reads are GETs, every change is a POST
 * carrying the CSRF token the server handed out in api/session. Paths are relative, so the
 * app works under any mount path.
 */
import type { ListPage, PoolSummary, ScheduleSummary, WorkDetail } from "../../admin/types.js";
import type { WorkflowCounts, WorkflowListPage, WorkflowRunDetail } from "../../admin/workflow-types.js";
import type { WorkflowVersionInfo } from "../../workflow/types.js";
import type { Series } from "../sampler.js";

/** The admin API's shapes, as the reads answer them. */
export type {
  ListPage,
  PoolSummary,
  ScheduleSummary,
  WorkDetail,
  WorkSummary,
  AttemptRecord,
  AttemptOutputRecord,
} from "../../admin/types.js";
/** The admin API's shapes of workflow runs. */
export type {
  WorkflowCounts,
  WorkflowEventInfo,
  WorkflowListPage,
  WorkflowRunDetail,
  WorkflowStepDetail,
  WorkflowSummary,
} from "../../admin/workflow-types.js";
/** A workflow version that live processes define or unfinished runs were started by. */
export type { WorkflowVersionInfo } from "../../workflow/types.js";
/** The chart's series, as the server samples them. */
export type { Series } from "../sampler.js";

/** What the server says about this session. */
export interface Session {
  csrf: string;
  readOnly: boolean;
}

/** An answer of the API that was not a success; its message is the server's. */
export class ApiError extends Error {}

async function answer<T>(res: Response): Promise<T> {
  const body = (await res.json().catch(() => ({ error: `HTTP ${res.status}` }))) as T & { error?: string };
  if (!res.ok) throw new ApiError(body.error ?? `HTTP ${res.status}`);
  return body;
}

async function get<T>(name: string, params: Record<string, string | undefined> = {}): Promise<T> {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") query.set(k, v);
  const qs = query.toString();
  return answer<T>(await fetch(`api/${name}${qs ? `?${qs}` : ""}`, { headers: { accept: "application/json" } }));
}

let session: Promise<Session> | null = null;

/** The session (fetched once). */
export function getSession(): Promise<Session> {
  session ??= get<Session>("session");
  return session;
}

/** Runs an action (api/action/<name>) with a JSON body. */
export async function act<T = unknown>(name: string, body: Record<string, unknown>): Promise<T> {
  const { csrf } = await getSession();
  const res = await fetch(`api/action/${name}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-workpool-csrf": csrf },
    body: JSON.stringify(body),
  });
  return answer<T>(res);
}

/** The reads. */
export const api = {
  pools: () => get<{ pools: PoolSummary[] }>("pools").then((r) => r.pools),
  schedules: () => get<{ schedules: ScheduleSummary[] }>("schedules").then((r) => r.schedules),
  series: (pool?: string) => get<Series>("series", { pool }),
  list: (pool: string, filter: Record<string, string | undefined>) => get<ListPage>("list", { pool, ...filter }),
  work: (id: string) => get<WorkDetail>("work", { id }),
  workflows: (filter: Record<string, string | undefined>) => get<WorkflowListPage>("workflows", filter),
  workflowCounts: () => get<{ counts: WorkflowCounts[] }>("workflow-counts").then((r) => r.counts),
  workflowVersions: () => get<{ versions: WorkflowVersionInfo[] }>("workflow-versions").then((r) => r.versions),
  workflowRun: (id: string, stepsFrom?: number) =>
    get<WorkflowRunDetail>("workflow-run", { id, stepsFrom: stepsFrom === undefined ? undefined : String(stepsFrom) }),
};

/** A bulk cancel or retry's answer: each id's outcome, and how many were done and not done. */
export type { BulkAnswer, BulkResult } from "../bulk.js";
/** The retry-all action's answer: how many were (or would be) retried. */
export type { RetryAllAnswer } from "../retry-all.js";
