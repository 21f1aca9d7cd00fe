// A second look at a timed herd that broke a per-herd guard while nothing disturbed it. The
// quiet tests' per-herd guards are runaway guards (their targets are means and medians over
// many herds), and a CI machine has met a herd over one that hundreds here never came near.
// A pacer that runs away does so again on the same seed; a draw of a machine's timers seldom
// twice. So one such herd per test run gets one more on its seed, and that one must hold.

export class SecondLook {
  private left: number;
  private readonly log: (line: string) => void;

  /**
   * @param options.left second looks allowed over the test's run (one: two herds over a guard
   *   in one run fail it)
   * @param options.log where a second look is said (the test's output; a test of this class
   *   reads it)
   */
  constructor(options: { left?: number; log?: (line: string) => void } = {}) {
    this.left = options.left ?? 1;
    this.log = options.log ?? console.log;
  }

  /**
   * Runs `once`; when `over` names a guard the herd broke and a look is left, says so with the
   * herd's own account (`account`: its load and timeline) and runs `once` again. Gives every
   * herd run, oldest first: all count in the test's means, and the last is the one its guards
   * hold.
   */
  async run<T>(
    what: string,
    once: () => Promise<T>,
    over: (herd: T) => string | undefined,
    account: (herd: T) => string,
  ): Promise<T[]> {
    const first = await once();
    const broke = over(first);
    if (broke === undefined || this.left === 0) return [first];
    this.left--;
    this.log(`[figure] ${what}: ${broke}, over its guard; a second look (${this.left} more allowed)\n${account(first)}`);
    return [first, await once()];
  }
}
