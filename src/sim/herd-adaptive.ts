import { Pacer, type PacerOptions } from '../policies/pacer.js';
import { type RetryOptions, RetryPolicy } from '../policies/retry-decision.js';
import type { HerdClients, HerdStrategy } from './herd-run.js';
import { REJECTED } from './herd-run.js';
import { GIVE_UP, RetryState } from './retry-state.js';

/**
 * Whether to retry is still kindly's retry decision (until success, bounded by an hour);
 * when is the pacer's business, so the backoff contributes nothing (constant 0, no jitter).
 */
const ADAPTIVE_RETRY: RetryOptions = {
  maxAttempts: Number.POSITIVE_INFINITY,
  maxElapsed: 3_600_000,
  backoff: { shape: 'constant', base: 0, jitter: 'none' },
};

/**
 * kindly's adaptive pacing in the herd: the clients share one `Pacer` (one
 * downstream in one process). Every answer is reported to it with its send time; a rejected
 * client comes back at `now + pacer.reserve(now)`, so retries leave at the learned rate
 * instead of each sleeping on its own. The pacer draws no randomness, so one seed suffices.
 */
export function adaptiveStrategy(options: PacerOptions = {}): HerdStrategy {
  const policy = new RetryPolicy(ADAPTIVE_RETRY);
  // Validates the pacer options once, up front, like every other strategy.
  new Pacer(options);
  return {
    name: 'adaptive',
    description: 'kindly Pacer (default options): retry when the pacer’s queue says, learning from every answer',
    random: false,
    create(sim, setup): HerdClients {
      const pacer = new Pacer(options);
      const state = new RetryState(policy, sim.random, setup.clients);
      const sentAt = new Float64Array(setup.clients);
      const tickets = new Float64Array(setup.clients);
      /** Whether the client's current attempt waited for the pacer. */
      const paced = new Uint8Array(setup.clients);
      return {
        send(client, now) {
          sentAt[client] = now;
          return state.attempt(client, now);
        },
        served(client, now) {
          pacer.onResult(now, 'ok', undefined, sentAt[client], paced[client] === 1);
        },
        rejected(client, now) {
          pacer.onResult(now, 'rejected', undefined, sentAt[client], paced[client] === 1);
          if (state.next(client, REJECTED, now) === GIVE_UP) return GIVE_UP;
          const wait = pacer.reserve(now);
          tickets[client] = pacer.lastTicket;
          paced[client] = pacer.lastTicket === 0 ? 0 : 1;
          return wait;
        },
        // The pacer's slots move as it learns: a client asks again when its wait ends.
        hold(client, now) {
          const more = pacer.holdFor(tickets[client]!, now);
          if (more === 0) tickets[client] = 0;
          return more;
        },
      };
    },
  };
}

export const ADAPTIVE_HERD_STRATEGY: HerdStrategy = adaptiveStrategy();
