/** One round of the ramp: the attempts started at one concurrency level. */
interface Round {
  level: number;
  startedAt: number;
  latencies: number[];
  sum: number;
  sumOfSquares: number;
}

/** How many standard errors above the baseline a round's mean must sit to count as queued. */
const Z = 2;

/**
 * Slow start for the first measurement of a callee's no-load latency, when nothing is known
 * about its capacity. Holding the concurrency at `probeConcurrency` until `windowSamples`
 * latencies are in takes `windowSamples / probeConcurrency` service times — 1.7 s of a 100 ms
 * callee served at a fraction of its capacity. Instead the level doubles after each round of
 * `level` answers whose mean latency stays within `tolerance` (plus two standard errors) of
 * the rounds before: a callee that does not queue at a level answers in the same time.
 *
 * A round is trusted only once the round after it is flat too (a level just above the
 * capacity queues only a few of its attempts and may pass as flat); at the first round that
 * queued, it and the round before are dropped and the level falls back to the last trusted
 * one. The measurement then goes on there as usual. Only latencies of trusted rounds are
 * handed to `commit`; `highestFlatLevel` is a lower bound of the callee's capacity.
 *
 * Attempts are assigned to the round in which they started, so the answers to a queued
 * round that arrive later are dropped too.
 */
export class ProbeRamp {
  private current: Round;
  private pending: Round | undefined;
  private trustedCount = 0;
  private trustedSum = 0;
  private trustedSumOfSquares = 0;
  private trustedLevel = 0;
  private dropFrom = Number.NaN;
  private dropUntil = Number.NaN;
  private roundBusiest = 0;
  private ramping = true;

  constructor(
    startLevel: number,
    private readonly maxLevel: number,
    private readonly tolerance: number,
    nowMs: number,
    private readonly commit: (latencyMs: number) => void,
  ) {
    this.current = round(startLevel, nowMs);
  }

  /** The concurrency the measurement runs at now. */
  get level(): number {
    return this.ramping ? this.current.level : Math.max(this.trustedLevel, this.current.level);
  }

  /** The highest level whose answers were trusted as no-load (0 before the first). */
  get highestFlatLevel(): number {
    return this.trustedLevel;
  }

  /** Attempts in flight now (to tell a round that ran at its level from one the callers left short). */
  inFlight(running: number): void {
    if (running > this.roundBusiest) this.roundBusiest = running;
  }

  /** An answer to an attempt started at `startedMs` (after the measurement began). */
  answer(latencyMs: number, startedMs: number, nowMs: number): void {
    if (startedMs >= this.dropFrom && startedMs < this.dropUntil) return;
    if (!this.ramping) {
      this.commit(latencyMs);
      return;
    }
    const pending = this.pending;
    const target =
      startedMs >= this.current.startedAt
        ? this.current
        : pending !== undefined && startedMs >= pending.startedAt
          ? pending
          : undefined;
    if (target === undefined) {
      // Started in a round that is already trusted.
      this.trust(latencyMs);
      return;
    }
    add(target, latencyMs);
    if (target === this.current && pending === undefined && this.roundBusiest < target.level) {
      // The first answer came back before the callers ever filled the first level: they, not
      // the callee, set the pace — nothing to learn by ramping.
      this.stop(target);
      return;
    }
    if (target === this.current && target.latencies.length >= target.level) this.closeRound(nowMs);
  }

  private closeRound(nowMs: number): void {
    const done = this.current;
    const pending = this.pending;
    if (pending === undefined) {
      // The first round is the baseline: at probeConcurrency, as the measurement always assumed.
      this.pending = done;
      this.next(done, nowMs);
      return;
    }
    if (this.queued(done, pending)) {
      this.dropUntil = nowMs;
      this.pending = undefined;
      if (this.trustedLevel === 0) {
        // Only the baseline round came before: it stays the baseline.
        this.dropFrom = done.startedAt;
        for (const l of pending.latencies) this.trust(l);
        this.trustedLevel = pending.level;
      } else this.dropFrom = pending.startedAt;
      this.ramping = false;
      this.current = round(this.trustedLevel, nowMs);
      return;
    }
    for (const l of pending.latencies) this.trust(l);
    this.trustedLevel = pending.level;
    this.pending = done;
    this.next(done, nowMs);
  }

  /** Doubles the level, unless the callers did not fill the last one or the cap is reached. */
  private next(done: Round, nowMs: number): void {
    const filled = this.roundBusiest >= done.level;
    this.roundBusiest = 0;
    const level = Math.min(done.level * 2, this.maxLevel);
    if (!filled || level <= done.level) {
      // Nothing more to learn by ramping: trust what came so far and go on at this level.
      this.stop(done);
      return;
    }
    this.current = round(level, nowMs);
  }

  /** Ends the ramp at `last`'s level, trusting it and every round before. */
  private stop(last: Round): void {
    if (this.pending !== undefined && this.pending !== last) for (const l of this.pending.latencies) this.trust(l);
    for (const l of last.latencies) this.trust(l);
    this.trustedLevel = Math.max(
      this.trustedLevel,
      Math.min(last.level, this.pending === undefined ? this.roundBusiest : last.level),
    );
    this.pending = undefined;
    this.ramping = false;
    this.current = round(last.level, last.startedAt);
  }

  /** Whether `done`'s mean latency sits clearly above the trusted rounds' (or, first, `pending`'s). */
  private queued(done: Round, pending: Round): boolean {
    const base =
      this.trustedCount > 0
        ? { n: this.trustedCount, sum: this.trustedSum, sumOfSquares: this.trustedSumOfSquares }
        : { n: pending.latencies.length, sum: pending.sum, sumOfSquares: pending.sumOfSquares };
    const n = done.latencies.length;
    const mean = done.sum / n;
    const baseMean = base.sum / base.n;
    const variance = (s: { n: number; sum: number; sumOfSquares: number }) =>
      s.n < 2 ? 0 : Math.max(0, (s.sumOfSquares - (s.sum * s.sum) / s.n) / (s.n - 1));
    const standardError = Math.sqrt(
      variance({ n, sum: done.sum, sumOfSquares: done.sumOfSquares }) / n + variance(base) / base.n,
    );
    return mean > baseMean * (1 + this.tolerance) + Z * standardError;
  }

  private trust(latencyMs: number): void {
    this.trustedCount++;
    this.trustedSum += latencyMs;
    this.trustedSumOfSquares += latencyMs * latencyMs;
    this.commit(latencyMs);
  }
}

function round(level: number, startedAt: number): Round {
  return { level, startedAt, latencies: [], sum: 0, sumOfSquares: 0 };
}

function add(r: Round, latencyMs: number): void {
  r.latencies.push(latencyMs);
  r.sum += latencyMs;
  r.sumOfSquares += latencyMs * latencyMs;
}
