/**
 * Deliberately broken drivers, used only by the simulator's own tests to prove that each
 * invariant catches the bug it is about (see sim-variants.test.ts).
 */
import type { Driver } from "../../src/driver/driver.js";

/** A broken driver: wraps the real one. */
export interface Variant {
  name: string;
  wrap<Tx>(driver: Driver<Tx>): Driver<Tx>;
}
