// A small seeded random source (mulberry32), so a chaos run's schedule —
// workload, kill delays, fault parameters, which objects are deleted — can be
// replayed from the seed it prints.

/** A deterministic stream of numbers in [0, 1) from a 32-bit seed. */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** The next number in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** A whole number in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(0, items.length - 1)] as T;
  }

  /** A shuffled copy (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  }

  /**
   * An independent stream for one purpose, derived from this stream's seed
   * and a label, so adding draws to one purpose does not shift the others.
   */
  static derive(seed: number, label: string): SeededRandom {
    let h = seed >>> 0;
    for (const ch of label) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
    return new SeededRandom(h);
  }
}

/** A fresh random 32-bit seed (for runs without `--seed`). */
export function randomSeed(): number {
  return Math.floor(Math.random() * 4294967296) >>> 0;
}
