/**
 * The dashboard's JSON endpoints, each a thin layer over the admin API: reads answer GET,
 * actions answer POST (the handler checks auth, CSRF and readOnly before any of these).
 * Input is checked here for shape and by the admin API for values.
 */
import type { AdminStateFilter, ListOptions, WorkpoolAdmin } from "../admin/types.js";
import { checkOptionKeys, optionKeys, type OptionKey, type OptionKeys } from "../checks.js";
import type { ApiAnswer } from "./answer.js";
import { bulkCancel, bulkRetry, checkBulkIds } from "./bulk.js";
import { retryAllAction, type RetryAllBody } from "./retry-all.js";
import type { Sampler, Series } from "./sampler.js";
import { workflowActionEndpoint, workflowReadEndpoint } from "./workflows-api.js";

export type { ApiAnswer } from "./answer.js";

const ok = (body: unknown): ApiAnswer => ({ status: 200, body });

function text(query: URLSearchParams, name: string): string | undefined {
  const v = query.get(name);
  return v === null || v === "" ? undefined : v;
}

/** GET endpoints, by name (the path after `api/`). */
export function readEndpoint(admin: WorkpoolAdmin, sampler: Sampler, name: string, query: URLSearchParams): Promise<ApiAnswer> | null {
  switch (name) {
    case "pools":
      return admin.pools().then((pools) => ok({ pools }));
    case "schedules":
      return admin.schedules(text(query, "pool")).then((schedules) => ok({ schedules }));
    case "series": {
      const pool = text(query, "pool") ?? null;
      return sampler.watch().then(() => ok(sampler.series(pool) satisfies Series));
    }
    case "list": {
      const pool = query.get("pool") ?? "";
      const options: ListOptions = {};
      const state = text(query, "state");
      if (state !== undefined) options.state = state as AdminStateFilter;
      for (const k of ["handler", "key", "search", "cursor"] as const) {
        const v = text(query, k);
        if (v !== undefined) options[k] = v;
      }
      const limit = text(query, "limit");
      if (limit !== undefined) options.limit = Number(limit);
      return admin.list(pool, options).then(ok);
    }
    case "work":
      return admin.get(query.get("id") ?? "").then((w) => (w === null ? { status: 404, body: { error: "no work with this id" } } : ok(w)));
    default:
      return workflowReadEndpoint(admin, name, query);
  }
}

/** The JSON body of each POST action, by name. */
interface ActionBodies {
  pause: { pool: string };
  resume: { pool: string };
  "set-parallelism": { pool: string; n: number };
  "cancel-all": { pool: string; handler?: string };
  "purge-finished": { pool: string };
  cancel: { ids: string[] };
  retry: { ids: string[] };
  "retry-all": RetryAllBody;
}

const BODY_KEYS: { readonly [A in keyof ActionBodies]: OptionKeys<OptionKey<ActionBodies[A]>> } = {
  pause: optionKeys<ActionBodies["pause"]>()({ pool: true }),
  resume: optionKeys<ActionBodies["resume"]>()({ pool: true }),
  "set-parallelism": optionKeys<ActionBodies["set-parallelism"]>()({ pool: true, n: true }),
  "cancel-all": optionKeys<ActionBodies["cancel-all"]>()({ pool: true, handler: true }),
  "purge-finished": optionKeys<ActionBodies["purge-finished"]>()({ pool: true }),
  cancel: optionKeys<ActionBodies["cancel"]>()({ ids: true }),
  retry: optionKeys<ActionBodies["retry"]>()({ ids: true }),
  "retry-all": optionKeys<ActionBodies["retry-all"]>()({
    pool: true,
    state: true,
    handler: true,
    key: true,
    finishedAfter: true,
    finishedBefore: true,
    dryRun: true,
  }),
};

/**
 * POST actions, by name; `body` is the parsed JSON object, checked whole before anything
 * is done. `logInternal` hears what a bulk action's items failed on unexpectedly.
 */
export function actionEndpoint(
  admin: WorkpoolAdmin,
  name: string,
  body: unknown,
  logInternal: (e: unknown) => void,
): Promise<ApiAnswer> | null {
  const keys = <A extends keyof ActionBodies>(action: A) => checkOptionKeys("body", body, BODY_KEYS[action], `the ${name} action`, "body.");
  switch (name) {
    case "pause":
      return admin.pause(keys(name).pool as string).then(() => ok({ done: true }));
    case "resume":
      return admin.resume(keys(name).pool as string).then(() => ok({ done: true }));
    case "set-parallelism": {
      const b = keys(name);
      return admin.setParallelism(b.pool as string, b.n as number).then(() => ok({ done: true }));
    }
    case "cancel-all": {
      const b = keys(name);
      return admin
        .cancelAll(b.pool as string, b.handler === undefined ? {} : { handler: b.handler as string })
        .then((n) => ok({ count: n }));
    }
    case "purge-finished":
      return admin.purge(keys(name).pool as string, { state: "finished" }).then((n) => ok({ count: n }));
    case "cancel":
      return bulkCancel(admin, checkBulkIds(keys(name).ids), logInternal);
    case "retry":
      return bulkRetry(admin, checkBulkIds(keys(name).ids), logInternal);
    case "retry-all":
      return retryAllAction(admin, keys(name));
    default:
      return workflowActionEndpoint(admin, name, body);
  }
}
