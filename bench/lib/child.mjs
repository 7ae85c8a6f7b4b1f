// One measurement step in a fresh process: the parent sends { system, op, params, ctx },
// this process runs it and answers with the result and its own peak RSS, then exits.
// A fresh process per step keeps systems from sharing a heap, JIT state or connections,
// and makes the peak RSS that of one system's worker alone.
import { systemById } from "../systems/index.mjs";
import * as measurements from "./ops.mjs";
import { cpuVsFloor } from "./cpu-floor.mjs";
import { wfReplayAdvance, wfReplayBuild, wfSleepers, wfSteps } from "./workflows.mjs";

const ops = { ...measurements, cpuVsFloor, wfSteps, wfSleepers, wfReplayBuild, wfReplayAdvance };

process.once("message", async (msg) => {
  let reply;
  try {
    const system = systemById(msg.system);
    const fn = ops[msg.op];
    if (typeof fn !== "function") throw new Error(`unknown op ${msg.op}`);
    const result = await fn(system, msg.ctx, msg.params);
    reply = { ok: true, result: { ...result, peakRssMb: process.resourceUsage().maxRSS / 1024 } };
  } catch (e) {
    reply = { ok: false, error: e?.stack ?? String(e) };
  }
  process.send(reply, () => process.exit(0));
});
