/**
 * The dashboard's JSON endpoints, each a thin layer over the admin API: reads answer GET,
 * actions answer POST (the handler checks auth, CSRF and readOnly before any of these).
 * Input is checked here for shape and by the admin API for values.
 */
import type { AdminStateFilter, ListOptions, WorkpoolAdmin } from "../admin/types.js";
import { checkOptionKeys } from "../checks.js";
import { bulkCancel, bulkRetry, checkBulkIds } from "./bulk.js";
import type { Sampler, Series } from "./sampler.js";

/** What an endpoint answers: a status and a JSON body. */
export interface ApiAnswer {
  status: number;
  body: unknown;
}

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
      return null;
  }
}

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
  const keys = (allowed: readonly string[]) => checkOptionKeys("body", body, allowed, `the ${name} action`, "body.");
  switch (name) {
    case "pause":
      return admin.pause(keys(["pool"]).pool as string).then(() => ok({ done: true }));
    case "resume":
      return admin.resume(keys(["pool"]).pool as string).then(() => ok({ done: true }));
    case "set-parallelism": {
      const b = keys(["pool", "n"]);
      return admin.setParallelism(b.pool as string, b.n as number).then(() => ok({ done: true }));
    }
    case "cancel-all": {
      const b = keys(["pool", "handler"]);
      return admin
        .cancelAll(b.pool as string, b.handler === undefined ? {} : { handler: b.handler as string })
        .then((n) => ok({ count: n }));
    }
    case "purge-finished":
      return admin.purge(keys(["pool"]).pool as string, { state: "finished" }).then((n) => ok({ count: n }));
    case "cancel":
      return bulkCancel(admin, checkBulkIds(keys(["ids"]).ids), logInternal);
    case "retry":
      return bulkRetry(admin, checkBulkIds(keys(["ids"]).ids), logInternal);
    default:
      return null;
  }
}
