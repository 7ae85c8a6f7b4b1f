/**
 * The simulator's only source of randomness: a small seeded generator (mulberry32), so
 * one seed always makes the same run.
 */

/** A seeded pseudo-random generator with the draws the simulator needs. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0 || 0x9e3779b9;
  }

  /** A float in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty list. */
  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.next() * list.length)]!;
  }

  /** One key of `weights`, drawn in proportion to its weight (weights of 0 are never drawn). */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as [K, number][];
    const total = entries.reduce((s, [, w]) => s + w, 0);
    let x = this.next() * total;
    for (const [k, w] of entries) {
      if ((x -= w) < 0) return k;
    }
    return entries.find(([, w]) => w > 0)![0];
  }

  /** A new generator seeded from this one: a part of the run with its own stream. */
  fork(): Rng {
    return new Rng(Math.floor(this.next() * 4294967296));
  }
}
