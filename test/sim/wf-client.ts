/**
 * The application's workflow calls in a run with workflows, at random moments: start()
 * (some with a workflowId already used, some with an onComplete that throws before it
 * succeeds), sendEvent() (to runs waiting or not yet, twice, to finished or unknown runs)
 * and cancel(). Like every application call they are not awaited.
 */
import type { StartOptions } from "../../src/workflow/index.js";
import type { SimProcess } from "./process.js";
import type { Scheduler } from "./scheduler.js";
import type { WfRun } from "./wf-run.js";
import { EVENT_NAMES } from "./wf-shapes.js";
import type { WfOcContext } from "./wf-workload.js";

/** Makes the workflow calls of one run. */
export class WfClient {
  private sent = 0;

  constructor(
    private readonly s: Scheduler,
    private readonly wf: WfRun,
  ) {}

  /** One random workflow call from `proc`. */
  step(proc: SimProcess): void {
    const r = this.wf.rng;
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
      void this.s.track(proc, api.manager.start(api.handles[i]!, null, options)).then(
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
      void this.s.track(proc, api.manager.cancel(id)).then(
        (did) => did && this.wf.obs.canceledTrue.add(id),
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
}
