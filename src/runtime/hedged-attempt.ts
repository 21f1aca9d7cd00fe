import { callHook } from '../errors/report-hook-error.js';
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
  return new Promise((resolve, reject) => {
    const members: HedgeMember<T>[] = [];
    let running = 0;
    let settled = false;
    let cancelTimer: Cancel | undefined;

    const finish = () => {
      settled = true;
      if (cancelTimer !== undefined) cancelTimer();
      cancelTimer = undefined;
    };
    const add = (member: HedgeMember<T>) => {
      const index = members.length;
      members.push(member);
      running++;
      member.promise.then(
        (value) => {
          running--;
          if (settled) {
            callHook(plan.discard, { value });
            return;
          }
          finish();
          const lost = new HedgeLostError();
          for (let i = 0; i < members.length; i++) if (i !== index) members[i]!.abort(lost);
          resolve({ value, winner: index });
        },
        (error: unknown) => {
          running--;
          if (!settled && running === 0) {
            finish();
            reject(error);
            return;
          }
          if (!(error instanceof HedgeLostError)) callHook(plan.discard, { error });
        },
      );
    };
    const schedule = () => {
      cancelTimer = plan.clock.schedule(plan.delayMs, () => {
        cancelTimer = undefined;
        if (settled) return;
        const n = members.length;
        const hedge = n <= plan.maxHedges ? plan.startHedge(n) : undefined;
        if (hedge === undefined) return;
        add(hedge);
        if (members.length <= plan.maxHedges) schedule();
      });
    };
    add(first);
    schedule();
  });
}
