import type { Cancel, Clock } from '../time/clock.js';

/** One running attempt of a hedged group. */
export interface HedgeMember<T> {
  promise: Promise<T>;
  /** Aborts the attempt's signal with `reason`. */
  abort: (reason: unknown) => void;
}

export interface HedgePlan<T> {
  clock: Clock;
  /** Wait before each hedge, ms (after the first attempt, then after each hedge). */
  delayMs: number;
  maxHedges: number;
  /**
   * Starts hedge `n` (1-based); `undefined` when it may not go (the policy refused, no slot).
   * A refusal ends hedging for this group.
   */
  startHedge: (n: number) => HedgeMember<T> | undefined;
  /**
   * Told of every answer that will not be the group's: a value that came after the winner's,
   * an error while another attempt was still running or after the group ended (the HTTP
   * layer cancels the response bodies). Not told of the group's own result.
   */
  discard?: (answer: { value: T } | { error: unknown }) => void;
}

/** The reason losers are aborted with: another attempt answered first. */
export class HedgeLostError extends Error {
  override readonly name = 'HedgeLostError';
  constructor() {
    super('another attempt of the same call answered first');
  }
}

/**
 * Runs the first attempt and, while it has not answered, a hedge every `delayMs` (as many as
 * the plan allows), without cancelling earlier ones. Resolves with the first successful
 * answer and the index of its attempt (0 = the first); every other attempt is then aborted
 * with a `HedgeLostError`. An attempt that fails does not end the group while another is
 * still running; once every attempt sent has failed, the group rejects with the error of the
 * one that ended last and sends no more hedges (the retry loop decides what follows).
 */
export function runHedged<T>(first: HedgeMember<T>, plan: HedgePlan<T>): Promise<{ value: T; winner: number }> {
  return new Promise((resolve, reject) => new HedgeRace(plan, resolve, reject).start(first));
}

/** One hedged group while it runs: its members, the timer of the next hedge, and who won. */
class HedgeRace<T> {
  private readonly members: HedgeMember<T>[] = [];
  private running = 0;
  private settled = false;
  private cancelTimer: Cancel | undefined = undefined;

  constructor(
    private readonly plan: HedgePlan<T>,
    private readonly resolve: (won: { value: T; winner: number }) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  start(first: HedgeMember<T>): void {
    this.add(first);
    this.schedule();
  }

  private add(member: HedgeMember<T>): void {
    const index = this.members.length;
    this.members.push(member);
    this.running++;
    member.promise.then(
      (value) => this.answered(index, value),
      (error: unknown) => this.failed(error),
    );
  }

  /** Member `index` answered: the first answer wins and the others are aborted; a later one is discarded. */
  private answered(index: number, value: T): void {
    this.running--;
    if (this.settled) {
      this.plan.discard?.({ value });
      return;
    }
    this.finish();
    const lost = new HedgeLostError();
    const members = this.members;
    for (let i = 0; i < members.length; i++) if (i !== index) members[i]!.abort(lost);
    this.resolve({ value, winner: index });
  }

  /** A member failed: the group fails with the last one to end; earlier errors are discarded. */
  private failed(error: unknown): void {
    this.running--;
    if (!this.settled && this.running === 0) {
      this.finish();
      this.reject(error);
      return;
    }
    if (!(error instanceof HedgeLostError)) this.plan.discard?.({ error });
  }

  private schedule(): void {
    this.cancelTimer = this.plan.clock.schedule(this.plan.delayMs, () => this.due());
  }

  /** The next hedge is due: started if the plan allows (a refusal ends hedging for the group). */
  private due(): void {
    this.cancelTimer = undefined;
    if (this.settled) return;
    const n = this.members.length;
    const hedge = n <= this.plan.maxHedges ? this.plan.startHedge(n) : undefined;
    if (hedge === undefined) return;
    this.add(hedge);
    if (this.members.length <= this.plan.maxHedges) this.schedule();
  }

  private finish(): void {
    this.settled = true;
    if (this.cancelTimer !== undefined) this.cancelTimer();
    this.cancelTimer = undefined;
  }
}
