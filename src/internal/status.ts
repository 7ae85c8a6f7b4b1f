/**
 * What `status()` says of a row, and the checks of the ids callers pass.
 */
import type { WorkRow } from "../driver/driver.js";
import type { Progress } from "./progress.js";
import { InvalidArgumentError } from "../errors.js";
import { isWorkId } from "../ids.js";
import { describeValue } from "../checks.js";
import type { RunResult, Status } from "../types.js";
import { MAX_BATCH } from "./enqueue-input.js";

/** Checks a list of work ids; `field` names it in errors (`id` for a single one). */
export function checkIds(field: string, ids: readonly unknown[]): string[] {
  if (!Array.isArray(ids)) throw new InvalidArgumentError(field, "must be an array of work ids");
  if (ids.length > MAX_BATCH) throw new InvalidArgumentError(field, `has ${ids.length} ids; at most ${MAX_BATCH} per call`);
  ids.forEach((id, i) => {
    if (!isWorkId(id)) {
      throw new InvalidArgumentError(
        ids.length === 1 && field === "id" ? "id" : `${field}[${i}]`,
        `is not a work id (26 characters, as returned by enqueue), got ${describeValue(id)}`,
      );
    }
  });
  return ids as string[];
}

/** An unfinished status with the row's priority (when not 0) and key (when it has one). */
function withOrder(status: Extract<Status, { state: "pending" | "running" }>, row: WorkRow): Status {
  if (row.priority !== 0) status.priority = row.priority;
  if (row.key !== null) status.key = row.key;
  return status;
}

/** The status of a stored row; `progress`: its running attempt's, as JSON. */
export function toStatus(row: WorkRow, progress?: string): Status {
  switch (row.state) {
    case "pending":
      return withOrder({ state: "pending", previousAttempts: row.attempt }, row);
    case "running": {
      const status = withOrder({ state: "running", previousAttempts: row.attempt - 1 }, row);
      if (progress !== undefined) (status as Extract<Status, { state: "running" }>).progress = JSON.parse(progress) as Progress;
      return status;
    }
    case "finished": {
      const status: Extract<Status, { state: "finished" }> = { state: "finished", result: JSON.parse(row.result!) as RunResult };
      if (row.onComplete && row.ocState !== "none") {
        status.onComplete = { state: row.ocState, failedAttempts: row.ocAttempts };
        if (row.ocError !== null) status.onComplete.error = row.ocError;
      }
      return status;
    }
  }
}
