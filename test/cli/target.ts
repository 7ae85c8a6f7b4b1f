/**
 * What the CLI tests share: a store for each test (from each store's *.test.ts), the work
 * the read tests look at, and how they check a run.
 */
import { afterEach, expect } from "vitest";
import { ManualClock, Workpool, WorkError, type Store } from "../../src/index.js";
import { quietLogger } from "../helpers/common.js";
import type { CliRun } from "./run.js";

/** A store for one test, and the command-line arguments that name it. */
export interface CliStore {
  store: Store<unknown>;
  args: string[];
  /** The same store named through the environment instead of --db: the variables, and the arguments still needed. */
  env: { vars: Record<string, string>; args: string[] };
  /** Sets columns of one work row with plain SQL, as a tool other than workpool could write them. */
  updateWork(id: string, columns: Record<string, string>): Promise<void>;
  dispose(): Promise<void>;
}

/** How a store's CLI tests get their stores. */
export interface CliTarget {
  name: string;
  /** A migrated, empty store. */
  create(): Promise<CliStore>;
  /** Arguments naming a database (file or schema) that does not exist, and whether it exists now. */
  absent(): Promise<{ args: string[]; exists(): Promise<boolean>; dispose(): Promise<void> }>;
}

/** The ids of the work populate() makes, by what happened to them. */
export type Populated = Record<"ok1" | "ok2" | "failed" | "retrying" | "pending", string>;

/**
 * The work the read tests look at, in pool "mail" (with a per-key limit and rate limits):
 * two successes, a failure (with error data), one waiting to retry, one due in an hour.
 */
export async function populate(store: Store<unknown>): Promise<Populated> {
  // Ids are ordered by time: a clock that moves 1 ms per enqueue makes their order the enqueue order.
  const clock = new ManualClock(Date.now());
  const pool = new Workpool(store, {
    name: "mail",
    logger: quietLogger,
    clock,
    keyParallelism: 2,
    rateLimit: { limit: 100, periodMs: 60_000 },
    keyRateLimit: { limit: 5, periodMs: 1000 },
  });
  const step = (): void => clock.advance(1);
  const send = pool.defineAction("send", (_c, to: string) => `sent to ${to}`);
  const bounce = pool.defineAction("bounce", () => {
    throw new WorkError("boom: mailbox does not exist", { smtp: 550 });
  });
  const flaky = pool.defineAction("flaky", () => {
    throw new Error("try later");
  });
  const ok1 = await pool.enqueueAction(send, "a@b.c", { name: "welcome" });
  step();
  const ok2 = await pool.enqueueAction(send, "d@e.f");
  step();
  const failed = await pool.enqueueAction(bounce, {});
  step();
  const retrying = await pool.enqueueAction(flaky, {}, { retry: { maxAttempts: 3, initialBackoffMs: 3_600_000, base: 2 } });
  step();
  const pending = await pool.enqueueAction(send, "later@b.c", { runAfter: 3_600_000, key: "tenant-7", logLevel: "DEBUG", priority: 5 });
  await pool.runOnce();
  return { ok1, ok2, failed, retrying, pending };
}

/** Expects a run to exit with `code`, showing its output when it does not. */
export function expectExit(run: CliRun, code: number): void {
  expect({ code: run.code, stderr: run.stderr }).toMatchObject({ code });
}

/** The column at which `header` starts in a table's first line. */
export function column(table: string, header: string): number {
  return table.split("\n")[0]!.indexOf(header);
}

/** A function giving each test fresh stores of `target`, disposed of after the test. */
export function useStores(target: CliTarget): () => Promise<CliStore> {
  const live: CliStore[] = [];
  afterEach(async () => {
    for (const l of live.splice(0)) await l.dispose();
  });
  return async () => {
    const s = await target.create();
    live.push(s);
    return s;
  };
}
