/**
 * The admin API's actions on workflow runs: restart, fork, skip and send an event, as
 * WorkflowManager takes them (src/workflow/operate.ts), on a store with no workflow
 * defined. What a run needs next (an advance, its timeout, a child run's cancel) is
 * written as the internal work a started worker of the run's pool carries out; a step's
 * open work is canceled through the pool's cancel transition.
 */
import type { Clock } from "../clock.js";
import type { Driver } from "../driver/driver.js";
import { encodeJson } from "../json.js";
import { cancelWork } from "../internal/transitions/cancel.js";
import { insertWork } from "../internal/transitions/enqueue.js";
import { forkRun, restartRun, skipStep, writeEvent, type OperatorHost } from "../workflow/operate.js";
import { advanceRow, cancelRequestRow, runTimeoutRow } from "../workflow/run-work.js";
import { checkEventName } from "../workflow/validate.js";
import { adminRuntime } from "./runtime.js";

/** The operator's actions on runs of any pool of `driver`'s store. */
export class AdminWorkflowActions<Tx> {
  private readonly host: OperatorHost<Tx>;

  constructor(driver: Driver<Tx>, clock: Clock) {
    this.host = adminOperator(driver, clock);
  }

  /** As WorkflowManager.restart(). */
  restart(id: string, options: unknown): Promise<void> {
    return restartRun(this.host, id, options, "admin.restartWorkflow()");
  }

  /** As WorkflowManager.fork(). */
  fork(id: string, options: unknown): Promise<string> {
    return forkRun(this.host, id, options, "admin.forkWorkflow()");
  }

  /** As WorkflowManager.skip(). */
  skip(id: string): Promise<void> {
    return skipStep(this.host, id);
  }

  /** As WorkflowManager.sendEvent(), in a transaction of its own. */
  async sendEvent(id: string, name: unknown, payload: unknown): Promise<void> {
    const event = checkEventName("name", name);
    const body = encodeJson("payload", payload === undefined ? null : payload);
    await this.host.driver.transaction((ops) => Promise.resolve(writeEvent(this.host, ops.tx, id, event, body)));
  }
}

/** The operator's host of the admin API: internal work rows, and the pool's cancel transition. */
function adminOperator<Tx>(driver: Driver<Tx>, clock: Clock): OperatorHost<Tx> {
  const now = (): number => clock.now();
  return {
    driver,
    idField: "id",
    now,
    checkRun: () => undefined,
    enqueueAdvance: (tx, run) => insertWork(adminRuntime(driver, run.pool, clock), [advanceRow(run.pool, run.id, now())], tx),
    enqueueTimeout: (tx, run, deadline) =>
      insertWork(adminRuntime(driver, run.pool, clock), [runTimeoutRow(run.pool, run.id, deadline, now())], tx),
    // Joins the caller's transaction (the store's transaction scope).
    cancelWork: (_ops, pool, workId) => cancelWork(adminRuntime(driver, pool, clock), [workId]),
    cancelChild: (ops, pool, childId) => insertWork(adminRuntime(driver, pool, clock), [cancelRequestRow(pool, childId, now())], ops.tx),
    // This process keeps no execution of the run; the generation the action moved fences a worker's.
    forget: () => undefined,
  };
}
