/**
 * What a broken variant (variants.ts) is, and the wrappers the variants are made with: a
 * driver, or the operations of its transactions, with some methods replaced.
 */
import type { Driver, TxOps } from "../../src/driver/driver.js";
import type { InvariantName } from "./invariants.js";

/** A broken driver, and the invariants that must catch it. */
export interface Variant {
  name: string;
  /** What is broken. */
  bug: string;
  /** The invariants allowed to report it (the first is the one it is about). */
  caughtBy: readonly InvariantName[];
  /** Proven on PostgreSQL too, not only on SQLite (each store reads the time and answers heartbeats its own way). */
  postgres?: boolean;
  /** A bug of the workflow layer: proven in runs that all have workflows, on both stores. */
  workflows?: boolean;
  /**
   * Proven in runs with step.map, patches and the operator's actions, which what it breaks
   * needs; the others run as they were first proven, without them (and faster).
   */
  extras?: boolean;
  /** Proven on SQLite alone: what breaks it is rare enough that PostgreSQL's slower seeds would take minutes. */
  sqliteOnly?: boolean;
  wrap<Tx>(driver: Driver<Tx>): Driver<Tx>;
  /** Breaks the engine itself while the variant runs (what no driver can break); returns the repair. */
  patch?(): () => void;
}

/** Any method. */
export type Method = (...args: never[]) => unknown;

/** The driver with some methods replaced (`real` is the original, bound). */
export function override<Tx>(driver: Driver<Tx>, methods: (real: Driver<Tx>) => Partial<Driver<Tx>>): Driver<Tx> {
  const replaced = methods(driver) as Record<string, Method>;
  return new Proxy(driver, {
    get(target, prop) {
      if (typeof prop === "string" && prop in replaced) return replaced[prop];
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? (value as Method).bind(target) : value;
    },
  });
}

/** The driver with some transaction operations replaced. */
export function overrideOps<Tx>(driver: Driver<Tx>, methods: (real: TxOps<Tx>) => Partial<TxOps<Tx>>): Driver<Tx> {
  return override(driver, (real) => ({
    transaction: <T>(fn: (ops: TxOps<Tx>) => Promise<T>) =>
      real.transaction((ops) => {
        const replaced = methods(ops) as Record<string, Method>;
        const broken = new Proxy(ops, {
          get(target, prop) {
            if (typeof prop === "string" && prop in replaced) return replaced[prop];
            const value: unknown = Reflect.get(target, prop, target);
            return typeof value === "function" ? (value as Method).bind(target) : value;
          },
        });
        return fn(broken);
      }),
  }));
}
