/**
 * Checks of the admin API's input, in the style of the rest of the API: an
 * InvalidArgumentError naming the field and what is allowed, before anything is read or
 * written; unknown option keys are errors.
 */
import type { WorkListQuery, WorkListState } from "../driver/admin-ops.js";
import { InvalidArgumentError } from "../errors.js";
import { isWorkId } from "../ids.js";
import { checkIds } from "../internal/status.js";
import { checkKey } from "../internal/enqueue-input.js";
import { checkMaxParallelism } from "../options.js";
import { checkInt, checkName, checkOptionKeys, describeValue, optionKeys } from "../checks.js";
import type { AdminStateFilter, ListOptions, WorkpoolAdmin } from "./types.js";

/** The states list() filters by. */
export const ADMIN_STATE_FILTERS: readonly AdminStateFilter[] = [
  "pending",
  "retrying",
  "running",
  "finished",
  "success",
  "failed",
  "canceled",
];

/** Most items of one list() page, and the default. */
export const MAX_PAGE = 500;
const DEFAULT_PAGE = 50;

const LIST_KEYS = optionKeys<ListOptions>()({ state: true, handler: true, key: true, search: true, limit: true, cursor: true });
const CANCEL_ALL_KEYS = optionKeys<NonNullable<Parameters<WorkpoolAdmin["cancelAll"]>[1]>>()({ before: true, handler: true, key: true });
const PURGE_KEYS = optionKeys<Parameters<WorkpoolAdmin["purge"]>[1]>()({ state: true, before: true });

/** A pool name, as `new Workpool({ name })` accepts it. */
export function checkPool(value: unknown): string {
  return checkName("pool", value);
}

/** One work id. */
export function checkId(value: unknown): string {
  return checkIds("id", [value])[0]!;
}

/** A handler name, as define*() accepts it. */
export function checkHandler(value: unknown): string {
  return checkName("handler", value, 200);
}

function checkText(field: string, value: unknown, max: number): string {
  if (typeof value !== "string" || value.length === 0 || value.length > max) {
    throw new InvalidArgumentError(field, `must be a string of 1 to ${max} characters, got ${describeValue(value)}`);
  }
  return value;
}

/** An epoch time in ms. */
export function checkTime(field: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new InvalidArgumentError(field, `must be a finite epoch time in ms, got ${describeValue(value)}`);
  }
  return value;
}

/** A search: a work id matches that id only; any other text is a handler or display name prefix. */
function searchFilter(search: unknown): { id: string | null; prefix: string | null } {
  if (search === undefined) return { id: null, prefix: null };
  const text = checkText("search", search, 200);
  return isWorkId(text) ? { id: text, prefix: null } : { id: null, prefix: text };
}

/** list()'s options as a driver query. */
export function checkListOptions(options: unknown): WorkListQuery {
  const o = (options === undefined ? {} : checkOptionKeys("options", options, LIST_KEYS, "admin.list()")) as ListOptions;
  if (o.state !== undefined && !ADMIN_STATE_FILTERS.includes(o.state)) {
    throw new InvalidArgumentError("state", `must be one of ${ADMIN_STATE_FILTERS.join(", ")}, got ${describeValue(o.state)}`);
  }
  if (o.cursor !== undefined && !isWorkId(o.cursor)) {
    throw new InvalidArgumentError("cursor", `must be the cursor of a previous list() page, got ${describeValue(o.cursor)}`);
  }
  return {
    state: (o.state as WorkListState | undefined) ?? null,
    fnName: o.handler === undefined ? null : checkHandler(o.handler),
    ...searchFilter(o.search),
    key: o.key === undefined ? null : checkKey("key", o.key),
    beforeId: o.cursor ?? null,
    limit: o.limit === undefined ? DEFAULT_PAGE : checkInt("limit", o.limit, 1, MAX_PAGE),
  };
}

/** cancelAll()'s filter. */
export function checkCancelAllFilter(filter: unknown): { before: number | null; fnName: string | null; key: string | null } {
  const f = filter === undefined ? {} : checkOptionKeys("filter", filter, CANCEL_ALL_KEYS, "admin.cancelAll()");
  return {
    before: f.before === undefined ? null : checkTime("before", f.before),
    fnName: f.handler === undefined ? null : checkHandler(f.handler),
    key: f.key === undefined ? null : checkKey("key", f.key),
  };
}

/** purge()'s options. */
export function checkPurgeOptions(options: unknown): { state: "finished" | "pending"; before: number | null } {
  const o = checkOptionKeys("options", options, PURGE_KEYS, "admin.purge()");
  if (o.state !== "finished" && o.state !== "pending") {
    throw new InvalidArgumentError("state", `must be "finished" or "pending", got ${describeValue(o.state)}`);
  }
  return { state: o.state, before: o.before === undefined ? null : checkTime("before", o.before) };
}

/** setParallelism()'s limit. */
export function checkParallelism(value: unknown): number {
  return checkMaxParallelism("n", value);
}
