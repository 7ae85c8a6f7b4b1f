// What each job of a drain costs the PostgreSQL server over its whole life, in the runner
// process around the drain's child steps (see server-cost.mjs for how it is measured):
//
//   fill     the backlog's enqueue (batches of FILL_BATCH_SIZE)
//   drain    claims and results, with whatever the system does meanwhile (workpool's
//            maintenance leader may vacuum its table)
//   cleanup  the system's own removal of finished jobs, in a fresh child: workpool's
//            retention (retentionMs 0, maintenance passes until one deletes nothing),
//            pg-boss's archive and delete with 0-second intervals; graphile-worker deletes
//            a job when it completes, so nothing
//   vacuum   one VACUUM of every table in the system's schema: the dead row versions every
//            system leaves are reclaimed by someone, and this server runs autovacuum off
//
// Per job: the fill divided by the jobs enqueued, every later phase by the jobs the drain
// completed (the same number unless the drain hit its time cap).
import pg from "pg";
import { PG_URL } from "./env.mjs";
import { openServerCost } from "./server-cost.mjs";

const PHASES = ["fill", "drain", "cleanup", "vacuum"];

/** VACUUMs every table of `schema` (partitions included) in the bench database. */
async function vacuumSchema(schema) {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const r = await client.query("SELECT format('%I.%I', schemaname, tablename) AS t FROM pg_tables WHERE schemaname = $1 ORDER BY 1", [
      schema,
    ]);
    for (const { t } of r.rows) await client.query(`VACUUM ${t}`);
  } finally {
    await client.end();
  }
}

/**
 * Runs `fill()` then `drain()` (each starts its own child step) and, on a PostgreSQL
 * system, the cleanup and vacuum, measuring each on the server. Returns the drain's result
 * and `cost`: per phase and per job, or null for other stores.
 */
export async function drainLife({ system, child, fill, drain }) {
  if (system.store !== "postgres") {
    await fill();
    return { r: await drain(), cost: null };
  }
  const meter = await openServerCost();
  try {
    const phases = {};
    phases.fill = await meter.measure(fill);
    phases.drain = await meter.measure(drain);
    const r = phases.drain.result;
    phases.cleanup = await meter.measure(() => child("cleanup", {}));
    phases.vacuum = await meter.measure(() => vacuumSchema(system.schema));
    return { r, cost: perJob(phases, r.n, r.completed, { cleanup: phases.cleanup.result }) };
  } finally {
    await meter.close();
  }
}

/** The figures of one phase: server CPU µs (the bench database's backends plus the shared background processes) and WAL bytes. */
function figures(p) {
  return {
    cpuUs: p.cpuUs ? p.cpuUs.db + p.cpuUs.background : null,
    walBytes: p.walDbBytes ?? p.walBytes,
    raw: { cpuUs: p.cpuUs, walBytes: p.walBytes, walDbBytes: p.walDbBytes },
  };
}

function perJob(phases, enqueued, jobs, extra) {
  const out = { enqueued, jobs, phases: {}, perJob: {}, ...extra };
  let cpu = 0;
  let wal = 0;
  for (const name of PHASES) {
    const f = figures(phases[name]);
    out.phases[name] = f;
    const n = name === "fill" ? enqueued : jobs;
    out.perJob[name] = { cpuUs: f.cpuUs === null ? null : f.cpuUs / n, walBytes: f.walBytes / n };
    cpu = f.cpuUs === null || cpu === null ? null : cpu + f.cpuUs / n;
    wal += f.walBytes / n;
  }
  out.perJob.total = { cpuUs: cpu, walBytes: wal };
  return out;
}

/** The two metrics every drain workload adds for a PostgreSQL system, keyed by `key`. */
export function lifeMetrics(key, what) {
  return [
    {
      key: `${key}SrvCpu`,
      short: `${what}, server CPU per job`,
      label: () =>
        `PostgreSQL server CPU per job over its whole life (enqueue, ${what}, deletion of the finished job, vacuum): the bench database's backends and the server's background processes`,
      unit: "µs",
      better: "lower",
    },
    {
      key: `${key}Wal`,
      short: `${what}, WAL per job`,
      label: () =>
        `WAL bytes per job over its whole life (enqueue, ${what}, deletion of the finished job, vacuum), the bench database's records`,
      unit: "B",
      better: "lower",
    },
  ];
}

/** The metric values and a one-line split for the log, from drainLife's cost (nothing for other stores). */
export function lifeValues(key, cost) {
  if (!cost) return { values: {}, line: "" };
  const t = cost.perJob.total;
  const values = { [`${key}Wal`]: t.walBytes };
  if (t.cpuUs !== null) values[`${key}SrvCpu`] = t.cpuUs;
  const part = (name) => {
    const p = cost.perJob[name];
    return `${name} ${p.cpuUs === null ? "n/a" : Math.round(p.cpuUs)} µs ${Math.round(p.walBytes)} B`;
  };
  return { values, line: `server per job: ${["fill", "drain", "cleanup", "vacuum", "total"].map(part).join(", ")}` };
}
