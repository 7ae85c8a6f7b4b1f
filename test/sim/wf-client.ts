/**
 * The application's workflow calls in a run with workflows, at random moments: start()
 * (some with a workflowId already used, some with an onComplete that throws before it
 * succeeds), sendEvent() (to runs waiting or not yet, twice, to finished or unknown runs)
 * and cancel(); and, drawn from a stream of their own, the operator's restart(), skip() and
 * fork(). Like every application call they are not awaited.
 */
import { InvalidArgumentError } from "../../src/errors.js";
import { UnknownWorkflowError, type StartOptions } from "../../src/workflow/index.js";
import type { SimProcess } from "./process.js";
import type { Rng } from "./rng.js";
import type { Scheduler } from "./scheduler.js";
import type { OperatorAsk } from "./wf-operator-checks.js";
import type { WfRun } from "./wf-run.js";
import { EVENT_NAMES } from "./wf-shapes.js";
import type { WfOcContext } from "./wf-workload.js";

/** Share of the client's workflow calls that are the operator's, in runs that have them. */
const OPERATOR_SHARE = 0.3;
const RESTARTABLE = new Set(["failed", "canceled", "blocked"]);

/** Makes the workflow calls of one run. */
export class WfClient {
  private sent = 0;
  private forks = 0;

  constructor(
    private readonly s: Scheduler,
    private readonly wf: WfRun,
  ) {}

  /** One random workflow call from `proc`. */
  step(proc: SimProcess): void {
    const r = this.wf.rng;
    const ops = this.wf.ops;
    if (ops && this.wf.runs.length && ops.chance(OPERATOR_SHARE)) return this.operate(proc, ops);
    const known = [...this.wf.known];
    const what = r.weighted({ start: 4, event: known.length ? 5 : 0, cancel: known.length ? 1.5 : 0 });
    const head = `${this.s.head()} ${proc.label}`;
    const api = proc.wf!;
    const { trace } = this.s;
    if (what === "start") {
      const i = r.int(0, this.wf.shapes.length - 1);
      const options: StartOptions<unknown, WfOcContext> = {};
      // A few ids per run: a second start() with one starts nothing.
      if (r.chance(0.3)) options.workflowId = `${this.s.config.pool}.run${r.int(1, 3)}`;
      if (r.chance(0.6)) {
        options.onComplete = api.onComplete;
        options.context = { t: r.pick([0, 0, 1, 2]) };
      }
      const given = options.workflowId === undefined ? "" : ` as ${trace.runLabel(options.workflowId)}`;
      trace.add(
        `${head} start ${this.wf.shapes[i]!.name}${given}${options.context ? ` with onComplete (throws ${options.context.t})` : ""}`,
      );
      void this.s.track(proc, api.manager.start(api.handles[i]!, api.args, options)).then(
        (id) => {
          trace.runLabel(id);
          this.wf.known.add(id);
        },
        () => undefined,
      );
      return;
    }
    const id = r.chance(0.9) ? r.pick(known) : "sim.nobody";
    if (what === "cancel") {
      this.wf.obs.cancelAsked.add(id);
      trace.add(`${head} cancel run ${trace.runLabel(id)}`);
      // An answer that crossed a restart or skip of the run may be about its earlier life: not held to.
      const reopens = this.wf.obs.reopens.get(id) ?? 0;
      void this.s.track(proc, api.manager.cancel(id)).then(
        (did) => did && (this.wf.obs.reopens.get(id) ?? 0) === reopens && this.wf.obs.canceledTrue.add(id),
        () => undefined,
      );
      return;
    }
    const name = r.pick(EVENT_NAMES);
    const payload = { e: ++this.sent };
    const times = r.chance(0.2) ? 2 : 1;
    trace.add(`${head} sendEvent(${trace.runLabel(id)}, ${name}, e${payload.e})${times > 1 ? " twice" : ""}`);
    for (let i = 0; i < times; i++) void this.s.track(proc, api.manager.sendEvent(id, name, payload)).catch(() => undefined);
  }

  /**
   * One operator action on a run the last read showed: a restart from a drawn entry (of a
   * failed, canceled or blocked top-level run), a skip (of a blocked run) or a fork from a
   * drawn entry; now and then of a run the action refuses, which must write nothing.
   */
  operate(proc: SimProcess, ops: Rng): void {
    const runs = this.wf.runs;
    const restartable = runs.filter((r) => r.parentId === null && RESTARTABLE.has(r.state));
    const blocked = runs.filter((r) => r.state === "blocked");
    const what = ops.weighted({ restart: restartable.length ? 3 : 0, skip: blocked.length ? 3 : 0, fork: 1 });
    const fit = what === "restart" ? restartable : what === "skip" ? blocked : runs;
    const run = ops.pick(ops.chance(0.1) ? runs : fit);
    const api = proc.wf!;
    const { trace, config } = this.s;
    const { obs } = this.wf;
    const head = `${this.s.head()} ${proc.label} operator`;
    if (what === "fork") {
      const from = ops.int(0, run.steps);
      const forkId = `${config.pool}.fork${++this.forks}`;
      obs.forks.set(forkId, { source: run.id, from });
      trace.add(`${head} fork run ${trace.runLabel(run.id)} from ${from} as ${trace.runLabel(forkId)}`);
      void this.s.track(proc, api.manager.fork(run.id, { from, workflowId: forkId })).catch(() => undefined);
      return;
    }
    const ask: OperatorAsk = what === "restart" ? { kind: "restart", from: ops.int(0, run.steps) } : { kind: "skip" };
    const asks = obs.asks.get(run.id) ?? [];
    obs.asks.set(run.id, asks);
    asks.push(ask);
    trace.add(`${head} ${what} run ${trace.runLabel(run.id)}${ask.kind === "restart" ? ` from ${ask.from}` : ""}`);
    const call = ask.kind === "restart" ? api.manager.restart(run.id, { from: ask.from }) : api.manager.skip(run.id);
    // A refusal writes nothing, so its ask is dropped; any other failure may follow a commit, and the ask stays.
    void this.s.track(proc, call).catch((err: unknown) => {
      const refused = err instanceof InvalidArgumentError || err instanceof UnknownWorkflowError;
      if (refused && asks.includes(ask)) asks.splice(asks.indexOf(ask), 1);
    });
  }
}
