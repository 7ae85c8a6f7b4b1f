/**
 * workpoolAdmin(store): the operator's API over a store, usable with no pool or handler
 * defined in this process. Reads go through the driver's admin operations; every change
 * goes through the same transitions a pool makes (see actions.ts).
 */
import type { Registry } from "prom-client";
import { systemClock, type Clock } from "../clock.js";
import type { PoolLimitChange } from "../driver/pool-ops.js";
import { DRIVER, type Driver, type Store } from "../driver/driver.js";
import { InvalidArgumentError } from "../errors.js";
import { checkClock } from "../options.js";
import { checkOptionKeys, optionKeys } from "../checks.js";
import type { WorkId } from "../types.js";
import { AdminActions } from "./actions.js";
import { AdminMetrics } from "./metrics.js";
import { readWorkflow, readWorkflowSteps, requestWorkflowCancel } from "./workflows.js";
import { AdminWorkflowActions } from "./workflow-actions.js";
import { checkWorkflowList, checkWorkflowRun, countWorkflows, listPage, readWorkflowRun } from "./workflow-reads.js";
import type { WorkflowCounts, WorkflowListOptions, WorkflowListPage, WorkflowRunDetail, WorkflowRunOptions } from "./workflow-types.js";
import { checkWorkflowId } from "../workflow/validate.js";
import type { ForkOptions, RestartOptions, WorkflowStatus, WorkflowStepInfo, WorkflowVersionInfo } from "../workflow/types.js";
import { readWorkflowVersions } from "../workflow/versions.js";
import { toPoolSummary, toWorkDetail, toWorkSummary } from "./reads.js";
import type {
  ListOptions,
  ListPage,
  ObservablePool,
  PoolSummary,
  ScheduleSummary,
  WorkDetail,
  WorkpoolAdmin,
  WorkpoolAdminOptions,
} from "./types.js";
import { toScheduleInfo } from "../cron/schedules.js";
import { checkRetryAllFilter, checkRetryAllOptions, retryAll } from "./retry-all.js";
import type { RetryAllFilter, RetryAllOptions, RetryAllPreview, RetryAllResult } from "./retry-all-types.js";
import { checkCancelAllFilter, checkId, checkListOptions, checkParallelism, checkPool, checkPurgeOptions } from "./validate.js";

/** The window of PoolSummary.lastMinute, ms. */
const LAST_MINUTE_MS = 60_000;

class Admin<Tx> implements WorkpoolAdmin {
  private readonly actions: AdminActions<Tx>;
  private readonly workflowActions: AdminWorkflowActions<Tx>;
  private readonly metricSet: AdminMetrics;
  private migrated: Promise<void> | null = null;

  constructor(
    private readonly driver: Driver<Tx>,
    private readonly clock: Clock,
  ) {
    this.actions = new AdminActions(driver, clock);
    this.workflowActions = new AdminWorkflowActions(driver, clock);
    this.metricSet = new AdminMetrics(
      () => this.pools(),
      (e) => console.error("workpool: the admin's metrics could not read the store", e),
    );
  }

  get registry(): Registry {
    return this.metricSet.registry;
  }

  /** Brings the schema up to date once, as a pool does on first use; a failure is tried again next call. */
  private ready(): Promise<void> {
    this.migrated ??= this.driver.migrate().catch((e: unknown) => {
      this.migrated = null;
      throw e;
    });
    return this.migrated;
  }

  async pools(): Promise<PoolSummary[]> {
    await this.ready();
    const now = this.clock.now();
    return (await this.driver.readPools(now, now - LAST_MINUTE_MS)).map((r) => toPoolSummary(r, now));
  }

  async schedules(pool?: string): Promise<ScheduleSummary[]> {
    const name = pool === undefined ? null : checkPool(pool);
    await this.ready();
    return (await this.driver.listSchedules(name)).map((s) => ({ pool: s.pool, ...toScheduleInfo(s) }));
  }

  async list(pool: string, options?: ListOptions): Promise<ListPage> {
    const name = checkPool(pool);
    const query = checkListOptions(options);
    await this.ready();
    const rows = await this.driver.listWork(name, { ...query, limit: query.limit + 1 });
    const items = rows.slice(0, query.limit).map(toWorkSummary);
    return { items, cursor: rows.length > query.limit ? items[items.length - 1]!.id : null };
  }

  async get(id: string): Promise<WorkDetail | null> {
    const checked = checkId(id);
    await this.ready();
    const row = await this.driver.readWorkDetail(checked);
    return row ? toWorkDetail(row, await this.driver.readAttemptOutput([row.id])) : null;
  }

  async cancel(id: string): Promise<boolean> {
    const checked = checkId(id);
    await this.ready();
    return this.actions.cancel(checked);
  }

  async cancelAll(pool: string, filter?: { before?: number; handler?: string; key?: string }): Promise<number> {
    const name = checkPool(pool);
    const f = checkCancelAllFilter(filter);
    await this.ready();
    // +1: "before the call" includes work enqueued in the same millisecond.
    return this.actions.cancelAll(name, f.before ?? this.clock.now() + 1, { fnName: f.fnName, key: f.key });
  }

  async retry(id: string): Promise<WorkId> {
    const checked = checkId(id);
    await this.ready();
    return this.actions.retry(checked);
  }

  retryAll(pool: string, filter: RetryAllFilter, options: RetryAllOptions & { dryRun: true }): Promise<RetryAllPreview>;
  retryAll(pool: string, filter: RetryAllFilter, options?: RetryAllOptions & { dryRun?: false }): Promise<RetryAllResult>;
  retryAll(pool: string, filter: RetryAllFilter, options?: RetryAllOptions): Promise<RetryAllResult | RetryAllPreview>;
  async retryAll(pool: string, filter: RetryAllFilter, options?: RetryAllOptions): Promise<RetryAllResult | RetryAllPreview> {
    const name = checkPool(pool);
    const query = checkRetryAllFilter(filter);
    const { dryRun } = checkRetryAllOptions(options);
    await this.ready();
    return retryAll(this.driver, this.clock, name, query, dryRun);
  }

  async purge(pool: string, options: { state: "finished" | "pending"; before?: number }): Promise<number> {
    const name = checkPool(pool);
    const o = checkPurgeOptions(options);
    await this.ready();
    const before = o.before ?? this.clock.now() + 1;
    return o.state === "finished" ? this.actions.purgeFinished(name, before) : this.actions.purgePending(name, before);
  }

  async pause(pool: string): Promise<void> {
    await this.changeLimit(checkPool(pool), { pause: true });
  }

  async resume(pool: string): Promise<void> {
    await this.changeLimit(checkPool(pool), { resume: true });
  }

  async setParallelism(pool: string, n: number): Promise<void> {
    const name = checkPool(pool);
    await this.changeLimit(name, { maxParallelism: checkParallelism(n) });
  }

  /** Changes the limit of a pool the store knows (one with a stored configuration or with work). */
  private async changeLimit(pool: string, change: PoolLimitChange): Promise<void> {
    await this.ready();
    const known =
      (await this.driver.readPoolConfig(pool)) !== null ||
      (await this.driver.listWork(pool, { state: null, fnName: null, id: null, prefix: null, key: null, beforeId: null, limit: 1 }))
        .length > 0;
    if (!known) throw new InvalidArgumentError("pool", `no pool named ${JSON.stringify(pool)} in this store`);
    await this.actions.changeLimit(pool, change);
  }

  async workflow(id: string): Promise<WorkflowStatus | null> {
    const checked = checkWorkflowId("id", id);
    await this.ready();
    return readWorkflow(this.driver, checked);
  }

  async workflowSteps(id: string): Promise<WorkflowStepInfo[] | null> {
    const checked = checkWorkflowId("id", id);
    await this.ready();
    return readWorkflowSteps(this.driver, checked);
  }

  async workflows(options?: WorkflowListOptions): Promise<WorkflowListPage> {
    const query = checkWorkflowList(options);
    await this.ready();
    return listPage(this.driver, query);
  }

  async workflowCounts(pool?: string): Promise<WorkflowCounts[]> {
    const name = pool === undefined ? null : checkPool(pool);
    await this.ready();
    return countWorkflows(this.driver, name);
  }

  async workflowRun(id: string, options?: WorkflowRunOptions): Promise<WorkflowRunDetail | null> {
    const checked = checkWorkflowRun(id, options);
    await this.ready();
    return readWorkflowRun(this.driver, checked);
  }

  async cancelWorkflow(id: string): Promise<boolean> {
    const checked = checkWorkflowId("id", id);
    await this.ready();
    return requestWorkflowCancel(this.driver, this.clock, checked);
  }

  async restartWorkflow(id: string, options: RestartOptions): Promise<void> {
    const checked = checkWorkflowId("id", id);
    await this.ready();
    await this.workflowActions.restart(checked, options);
  }

  async forkWorkflow(id: string, options: ForkOptions): Promise<string> {
    const checked = checkWorkflowId("id", id);
    await this.ready();
    return this.workflowActions.fork(checked, options);
  }

  async skipWorkflowStep(id: string): Promise<void> {
    const checked = checkWorkflowId("id", id);
    await this.ready();
    await this.workflowActions.skip(checked);
  }

  async sendWorkflowEvent(id: string, name: string, payload?: unknown): Promise<void> {
    const checked = checkWorkflowId("id", id);
    await this.ready();
    await this.workflowActions.sendEvent(checked, name, payload);
  }

  async workflowVersions(pool?: string): Promise<WorkflowVersionInfo[]> {
    const name = pool === undefined ? null : checkPool(pool);
    await this.ready();
    return readWorkflowVersions(this.driver, name, this.clock.now());
  }

  metrics(): Promise<string> {
    return this.metricSet.registry.metrics();
  }

  observe(pool: ObservablePool): () => void {
    if (typeof pool !== "object" || pool === null || typeof pool.on !== "function" || typeof pool.name !== "string") {
      throw new InvalidArgumentError("pool", "must be a Workpool (something with a name and on())");
    }
    return this.metricSet.observe(pool);
  }
}

const ADMIN_OPTION_KEYS = optionKeys<WorkpoolAdminOptions>()({ clock: true });

/**
 * The admin API over `store` (from sqliteStore() or postgresStore()). It needs no pool or
 * handler in this process; the store's schema is brought up to date on first use.
 */
export function workpoolAdmin(store: unknown, options?: WorkpoolAdminOptions): WorkpoolAdmin {
  const driver = (store as Partial<Store<unknown>> | null)?.[DRIVER];
  if (typeof store !== "object" || store === null || !driver) {
    throw new InvalidArgumentError("store", "must be a store from sqliteStore() or postgresStore()");
  }
  const o = (
    options === undefined ? {} : checkOptionKeys("options", options, ADMIN_OPTION_KEYS, "workpoolAdmin()")
  ) as WorkpoolAdminOptions;
  const clock = o.clock === undefined ? systemClock : checkClock(o.clock);
  return new Admin(driver, clock);
}
