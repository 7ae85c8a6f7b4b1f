/**
 * The admin API's view of workflow runs: a run's status and journal read from the store,
 * and a cancel request, which a started worker of the run's pool carries out (the admin
 * has no workflow definitions or handlers).
 */
import type { Clock } from "../clock.js";
import type { Driver } from "../driver/driver.js";
import { insertWork } from "../internal/transitions/enqueue.js";
import { cancelRequestRow } from "../workflow/run-work.js";
import { toStatus, toStepInfo } from "../workflow/outcomes.js";
import type { WorkflowStatus, WorkflowStepInfo } from "../workflow/types.js";
import { adminRuntime } from "./runtime.js";

/** A run's status, or null when the store has no run with this id. */
export async function readWorkflow<Tx>(driver: Driver<Tx>, id: string): Promise<WorkflowStatus | null> {
  const run = await driver.workflows().readRun(id);
  return run ? toStatus(run) : null;
}

/** A run's journal, or null when the store has no run with this id. */
export async function readWorkflowSteps<Tx>(driver: Driver<Tx>, id: string): Promise<WorkflowStepInfo[] | null> {
  const wf = driver.workflows();
  if (!(await wf.readRun(id))) return null;
  return (await wf.readSteps(id)).map(toStepInfo);
}

/**
 * Asks a worker of the run's pool to cancel it (as WorkflowManager.cancel does): true when
 * the run is running or blocked and the request is written, false otherwise.
 */
export async function requestWorkflowCancel<Tx>(driver: Driver<Tx>, clock: Clock, id: string): Promise<boolean> {
  const run = await driver.workflows().readRun(id);
  if (!run || (run.state !== "running" && run.state !== "blocked")) return false;
  // One pending request per run (its unique key).
  const work = cancelRequestRow(run.pool, id, clock.now());
  await insertWork(adminRuntime(driver, run.pool, clock), [work], undefined);
  return true;
}
