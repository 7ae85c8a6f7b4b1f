/**
 * Deliberately broken drivers, used only by the simulator's own tests to prove that each
 * invariant catches the bug it is about (see variants.test.ts). Each wraps the real
 * driver and breaks one rule of the contract.
 */
import type {
  ClaimOptions,
  CompleteResult,
  CompletionWrite,
  Driver,
  FinishWrite,
  PoolConfig,
  RescheduleWrite,
  TxOps,
  WorkRow,
} from "../../src/driver/driver.js";
import type { RateLimit } from "../../src/types.js";
import { override, overrideOps, type Variant } from "./variant-kit.js";

export type { Variant };

/** complete() as a driver without the attempt fence would write it: any unfinished row takes the outcome. */
function unfencedComplete<Tx>(
  real: Driver<Tx>,
  pool: string,
  writes: readonly CompletionWrite[],
  now: number,
  claim: ClaimOptions | null,
): Promise<CompleteResult> {
  return real.transaction(async (ops) => {
    const rows = new Map(
      (
        await ops.lockWork(
          pool,
          writes.map((w) => w.id),
        )
      ).map((r) => [r.id, r]),
    );
    const finishes: FinishWrite[] = [];
    const retries: RescheduleWrite[] = [];
    const canceled: string[] = [];
    for (const w of writes) {
      const row = rows.get(w.id);
      if (!row || row.state === "finished") continue;
      if (row.cancelRequested) canceled.push(w.id);
      const result = row.cancelRequested ? JSON.stringify({ kind: "canceled" }) : w.result;
      if (result !== null) finishes.push({ id: w.id, result, finishedAt: now, ocState: "none" });
      else retries.push({ id: w.id, runAt: w.runAt ?? now });
    }
    if (finishes.length) await ops.finish(finishes);
    if (retries.length) await ops.reschedule(retries);
    return { stale: [], canceled, claim: claim && ops.claim ? await ops.claim(pool, claim) : null };
  });
}

const isCanceled = (w: FinishWrite): boolean => w.result.includes('"canceled"');

/** Transaction operations that remember every row they locked, for a variant to look up. */
function remembering<Tx>(ops: TxOps<Tx>, locked: Map<string, WorkRow>): Pick<TxOps<Tx>, "lockWork" | "lockExpired"> {
  const keep = (rows: WorkRow[]): WorkRow[] => {
    for (const r of rows) locked.set(r.id, r);
    return rows;
  };
  return {
    lockWork: async (pool, ids) => keep(await ops.lockWork(pool, ids)),
    lockExpired: async (pool, now, limit) => keep(await ops.lockExpired(pool, now, limit)),
  };
}

/** Every broken variant. */
export const VARIANTS: readonly Variant[] = [
  {
    name: "claim-over-limit",
    bug: "the claim takes one slot more than maxParallelism",
    caughtBy: ["parallelism"],
    wrap: (d) =>
      override(d, (real) => ({
        async claim(pool, opts) {
          const config = (await real.readPoolConfig(pool)) as PoolConfig;
          await real.ensurePool(pool, config, { maxParallelism: config.maxParallelism + 1 });
          try {
            return await real.claim(pool, opts);
          } finally {
            await real.ensurePool(pool, config, { maxParallelism: config.maxParallelism });
          }
        },
      })),
  },
  {
    name: "claim-over-key-limit",
    bug: "the claim lets one attempt more than keyParallelism run per key",
    caughtBy: ["key-parallelism"],
    wrap: (d) =>
      override(d, (real) => ({
        async claim(pool, opts) {
          const config = (await real.readPoolConfig(pool)) as PoolConfig;
          if (config.keyParallelism === null) return real.claim(pool, opts);
          await real.ensurePool(pool, config, { keyParallelism: config.keyParallelism + 1 });
          try {
            return await real.claim(pool, opts);
          } finally {
            await real.ensurePool(pool, config, { keyParallelism: config.keyParallelism });
          }
        },
      })),
  },
  {
    name: "claim-over-rate-limit",
    bug: "the claim lets one start more than rateLimit and keyRateLimit into each window",
    caughtBy: ["rate-limit"],
    wrap: (d) =>
      override(d, (real) => ({
        async claim(pool, opts) {
          const rates = await real.readRateLimits(pool);
          const looser = (r: RateLimit | null) => r && { ...r, limit: r.limit + 1 };
          if (!rates.rateLimit && !rates.keyRateLimit) return real.claim(pool, opts);
          await real.setRateLimits(pool, { rateLimit: looser(rates.rateLimit), keyRateLimit: looser(rates.keyRateLimit) });
          try {
            return await real.claim(pool, opts);
          } finally {
            await real.setRateLimits(pool, rates);
          }
        },
      })),
  },
  {
    name: "claim-out-of-order",
    bug: "a claim that takes work of several priorities hands back the most urgent row",
    caughtBy: ["priority-order"],
    wrap: (d) =>
      override(d, (real) => ({
        async claim(pool, opts) {
          // One row more than asked, so the claim stays within its limit after the hand-back.
          const res = await real.claim(pool, { ...opts, limit: opts.limit + 1 });
          const rows = res.claimed;
          if (!rows.length) return res;
          const urgent = rows.reduce((a, b) => (b.priority < a.priority ? b : a));
          const back = rows.some((r) => r.priority > urgent.priority) ? urgent : rows.length > opts.limit ? rows.at(-1)! : null;
          if (!back) return res;
          await real.transaction((ops) => ops.release([{ id: back.id, attempt: back.attempt }], res.now));
          return { ...res, claimed: rows.filter((r) => r !== back), running: res.running - 1 };
        },
      })),
  },
  {
    name: "claim-skips-a-turn",
    bug: "a claim hands back the one row a key got while another key of its priority got two",
    caughtBy: ["key-turns"],
    wrap: (d) =>
      override(d, (real) => ({
        async claim(pool, opts) {
          // One row more than asked, so the claim stays within its limit after the hand-back.
          const res = await real.claim(pool, { ...opts, limit: opts.limit + 1 });
          const rows = res.claimed;
          const turns = new Map<string, WorkRow[]>();
          for (const r of rows) turns.set(`${r.priority}:${r.key}`, [...(turns.get(`${r.priority}:${r.key}`) ?? []), r]);
          const once = [...turns.values()].find(
            ([r, two]) => !two && [...turns.values()].some(([o, second]) => second && o!.priority === r!.priority),
          );
          const back = once ? once[0]! : rows.length > opts.limit ? rows.at(-1)! : null;
          if (!back) return res;
          await real.transaction((ops) => ops.release([{ id: back.id, attempt: back.attempt }], res.now));
          return { ...res, claimed: rows.filter((r) => r !== back), running: res.running - 1 };
        },
      })),
  },
  {
    name: "no-attempt-fence",
    bug: "a driver's complete() writes an outcome whatever attempt the row is on",
    caughtBy: ["fenced", "finish-once", "cancel-final"],
    wrap: (d) =>
      overrideOps(
        override(d, (real) => ({ complete: (pool, writes, now, claim) => unfencedComplete(real, pool, writes, now, claim) })),
        (ops) => ({
          // Work waiting to retry after a lost lease still looks like its old attempt.
          async lockWork(pool, ids) {
            return (await ops.lockWork(pool, ids)).map((r) =>
              r.state === "pending" && r.attempt > 0 ? { ...r, state: "running" as const } : r,
            );
          },
        }),
      ),
  },
  {
    name: "wrong-result",
    bug: "a failed attempt is stored as a success",
    caughtBy: ["right-result"],
    wrap: (d) =>
      overrideOps(d, (ops) => {
        const locked = new Map<string, WorkRow>();
        const success = (w: FinishWrite): FinishWrite => {
          const attempt = locked.get(w.id)?.attempt ?? 0;
          return w.result.includes('"failed"') ? { ...w, result: JSON.stringify({ kind: "success", returnValue: { a: attempt } }) } : w;
        };
        return {
          async lockWork(pool, ids) {
            const rows = await ops.lockWork(pool, ids);
            for (const r of rows) locked.set(r.id, r);
            return rows;
          },
          finish: (rows) => ops.finish(rows.map(success)),
        };
      }),
  },
  {
    name: "on-complete-twice",
    bug: "a delivered onComplete is left due again",
    caughtBy: ["on-complete-once"],
    wrap: (d) =>
      overrideOps(d, (ops) => ({
        updateOnComplete: (rows) =>
          ops.updateOnComplete(rows.map((r) => (r.ocState === "done" ? { ...r, ocState: "pending", ocRunAt: 0 } : r))),
      })),
  },
  {
    name: "on-complete-excluded",
    bug: "a finished work's onComplete is left due whatever onCompleteExcludeKinds says",
    caughtBy: ["on-complete-once"],
    wrap: (d) =>
      overrideOps(d, (ops) => {
        const locked = new Map<string, WorkRow>();
        return {
          ...remembering(ops, locked),
          finish: (rows) =>
            ops.finish(rows.map((w) => (w.ocState === "none" && locked.get(w.id)?.onComplete ? { ...w, ocState: "pending" } : w))),
        };
      }),
  },
  {
    name: "on-complete-dropped",
    bug: "an onComplete not delivered at once (its first try threw, or it is left for later) is written none",
    caughtBy: ["on-complete-once"],
    wrap: (d) =>
      overrideOps(d, (ops) => ({
        finish: (rows) => ops.finish(rows.map((w) => (w.ocState === "pending" ? { ...w, ocState: "none" } : w))),
        updateOnComplete: (rows) =>
          ops.updateOnComplete(rows.map((r) => (r.ocState === "pending" ? { ...r, ocState: "none", ocRunAt: null } : r))),
      })),
  },
  {
    name: "mutation-twice",
    bug: "a mutation that committed its writes goes back to the queue",
    // It runs again (its write twice), or goes back to the queue each time it succeeds and is still there after the drain.
    caughtBy: ["mutation-once", "nothing-lost"],
    wrap: (d) =>
      overrideOps(d, (ops) => {
        const kinds = new Map<string, WorkRow>();
        return {
          async lockWork(pool, ids) {
            const rows = await ops.lockWork(pool, ids);
            for (const r of rows) kinds.set(r.id, r);
            return rows;
          },
          async finish(rows) {
            const again = rows.filter((w) => kinds.get(w.id)?.kind === "mutation" && w.result.includes('"success"'));
            await ops.finish(rows.filter((w) => !again.includes(w)));
            if (again.length) await ops.reschedule(again.map((w) => ({ id: w.id, runAt: 0 })));
          },
        };
      }),
  },
  {
    name: "cancel-requeues",
    bug: "canceled pending work goes back to the queue instead of finishing",
    // Its onComplete, delivered in the same transaction, then ran for work that is pending again.
    caughtBy: ["cancel-final", "right-result", "on-complete-once"],
    wrap: (d) =>
      overrideOps(d, (ops) => ({
        async finish(rows) {
          await ops.finish(rows.filter((w) => !isCanceled(w)));
          const canceled = rows.filter(isCanceled);
          if (canceled.length) await ops.reschedule(canceled.map((w) => ({ id: w.id, runAt: 0 })));
        },
      })),
  },
  {
    name: "refinish",
    bug: "finished work is locked as if pending, so a cancel finishes it again",
    // Finished again, it is seen finishing twice, or its onComplete delivered a second time.
    caughtBy: ["finish-once", "on-complete-once"],
    wrap: (d) =>
      overrideOps(d, (ops) => ({
        async lockWork(pool, ids) {
          return (await ops.lockWork(pool, ids)).map((r) => (r.state === "finished" ? { ...r, state: "pending" as const } : r));
        },
      })),
  },
  {
    name: "stale-status",
    bug: "reads answer from a stale copy of each row",
    caughtBy: ["status"],
    wrap: (d) => {
      const seen = new Map<string, WorkRow>();
      return override(d, (real) => ({
        async readWork(pool, ids) {
          const rows = await real.readWork(pool, ids);
          return rows.map((r) => seen.get(r.id) ?? (seen.set(r.id, r), r));
        },
        // status() reads rows with their progress.
        async readWorkWithProgress(pool, ids) {
          const read = await real.readWorkWithProgress(pool, ids);
          return read.map(({ row, progress }) => ({ row: seen.get(row.id) ?? (seen.set(row.id, row), row), progress }));
        },
      }));
    },
  },
  {
    name: "early-retention",
    bug: "retention deletes finished work before retentionMs has passed",
    caughtBy: ["retention"],
    wrap: (d) =>
      override(d, (real) => ({
        deleteFinishedBefore: (pool, before, limit) => real.deleteFinishedBefore(pool, before + 3_600_000, limit),
      })),
  },
  {
    name: "no-rescue",
    bug: "expired leases are never found, so a crashed worker's attempts stay running",
    caughtBy: ["nothing-lost"],
    wrap: (d) => overrideOps(d, () => ({ lockExpired: () => Promise.resolve([]) })),
  },
  {
    name: "heartbeat-by-id",
    bug: "a heartbeat answers each lost attempt with its work's current attempt, as fencing by id alone would: a newer attempt of the same work is aborted",
    caughtBy: ["no-false-loss"],
    postgres: true,
    wrap: (d) =>
      override(d, (real) => ({
        async heartbeat(pool, workerId, refs, lease) {
          const res = await real.heartbeat(pool, workerId, refs, lease);
          if (!res.lost.length) return res;
          const rows = new Map(
            (
              await real.readWork(
                pool,
                res.lost.map((r) => r.id),
              )
            ).map((r) => [r.id, r]),
          );
          return { ...res, lost: res.lost.map((r) => ({ id: r.id, attempt: rows.get(r.id)?.attempt ?? r.attempt })) };
        },
      })),
  },
  {
    name: "stale-claim-time",
    bug: "claims and heartbeats read the time when the call is made, not once the store is held: a held claim starts stale leases",
    caughtBy: ["claim-time"],
    postgres: true,
    wrap: (d) =>
      override(d, (real) => {
        const atCall = <T extends { clock: () => number }>(o: T): T => {
          const now = o.clock();
          return { ...o, clock: () => now };
        };
        return {
          claim: (pool, opts) => real.claim(pool, atCall(opts)),
          complete: real.complete && ((pool, writes, now, claim) => real.complete!(pool, writes, now, claim && atCall(claim))),
          insertAndClaim: real.insertAndClaim && ((row, opts) => real.insertAndClaim!(row, atCall(opts))),
          heartbeat: (pool, workerId, refs, lease) => real.heartbeat(pool, workerId, refs, atCall(lease)),
        };
      }),
  },
];
