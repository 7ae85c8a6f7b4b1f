/**
 * Helpers of the workflow conformance tests: a pool with a WorkflowManager on the test's
 * store, and stepping the pool until its runs wait on something that is not due.
 */
import { Workpool, type WorkpoolOptions } from "../../src/index.js";
import { WorkflowManager } from "../../src/workflow/index.js";
import type { TestContext } from "./context.js";

/** A pool and its WorkflowManager (another "process" when `store` is another store). */
export function workflowPool<Tx>(
  t: TestContext<Tx>,
  options?: WorkpoolOptions,
  store = t.h.store,
): { pool: Workpool<Tx>; wf: WorkflowManager<Tx> } {
  const pool = t.pool({ maxParallelism: 20, ...options }, store);
  return { pool, wf: new WorkflowManager(pool) };
}

/** Steps the pool until a step claims nothing twice: every due step and advance has run. */
export async function drain<Tx>(pool: Workpool<Tx>, maxSteps = 200): Promise<number> {
  let idle = 0;
  let claimed = 0;
  for (let i = 0; i < maxSteps && idle < 2; i++) {
    const n = (await pool.runOnce()).claimed;
    claimed += n;
    idle = n === 0 ? idle + 1 : 0;
  }
  return claimed;
}
