/**
 * Randomness, injected. Jitter and every other random choice in kindly draws from a
 * `Random`, so a run is reproducible from a seed.
 */
export interface Random {
  /** A uniformly distributed number in [0, 1). */
  next(): number;
}

/**
 * A small, fast seeded PRNG (sfc32, seeded through splitmix32). Not cryptographic; good
 * enough for jitter and simulation, and identical on every platform.
 */
export class SeededRandom implements Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    if (!Number.isFinite(seed)) throw new RangeError(`Expected a finite seed, got ${seed}`);
    let s = Math.trunc(seed) >>> 0;
    const split = () => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = split();
    this.b = split();
    this.c = split();
    this.d = split();
    for (let i = 0; i < 12; i++) this.next();
  }

  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }
}

/** The platform's `Math.random`, the default outside tests and simulations. */
export const systemRandom: Random = { next: () => Math.random() };
