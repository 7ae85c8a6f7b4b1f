/**
 * The enqueue options of a schedule's work as the store keeps them with the schedule:
 * schedule() checks them once, as an enqueue would, and every tick's work gets them.
 */
import type { WorkFields } from "../driver/driver.js";

/** The enqueue options each tick's work gets, as stored with the schedule. */
export type StoredWorkOptions = Pick<WorkFields, "name" | "retry" | "timeoutMs" | "onComplete" | "context" | "priority" | "key"> & {
  /** The work's meta (see work-meta.ts); absent in schedules stored without one. */
  meta?: string | null;
};

/** The stored form (JSON text) of the options of `row`, a checked row of the schedule's work. */
export function storeWorkOptions(row: WorkFields): string {
  const stored: StoredWorkOptions = {
    name: row.name,
    retry: row.retry,
    timeoutMs: row.timeoutMs,
    onComplete: row.onComplete,
    context: row.context,
    priority: row.priority,
    key: row.key,
    meta: row.meta,
  };
  return JSON.stringify(stored);
}

/** The options stored with a schedule, as storeWorkOptions() wrote them. */
export function readWorkOptions(text: string): StoredWorkOptions {
  return JSON.parse(text) as StoredWorkOptions;
}
