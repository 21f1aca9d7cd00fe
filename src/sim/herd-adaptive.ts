import { Pacer, type PacerOptions } from '../policies/pacer.js';
import type { RetryOptions } from '../policies/retry-decision.js';
import type { HerdClients, HerdStrategy } from './herd-run.js';
import { REJECTED } from './herd-run.js';
import { SimDownstream } from './sim-downstream.js';

/**
 * Whether to retry is still kindly's retry decision (until success, bounded by an hour);
 * when is the pacer's business, so the backoff contributes nothing (constant 0, no jitter).
 */
const ADAPTIVE_RETRY: RetryOptions = {
  maxAttempts: Number.POSITIVE_INFINITY,
  maxElapsedMs: 3_600_000,
  backoff: { shape: 'constant', baseMs: 0, jitter: 'none' },
};

/**
 * kindly's adaptive pacing in the herd: the clients are calls of one `SimDownstream` with
 * `pacing` (one downstream in one process, no retry budget), so they run the pacing stage
 * `downstream()` runs: every answer is reported to the pacer with its attempt's send time;
 * while it is throttling, a rejected call yields, then books its slot (`pacer.reserve`) and
 * waits for it — given back if it would miss the call's deadline. Retries leave at the learned
 * rate instead of each sleeping on its own. The pacer draws no randomness: one seed suffices.
 */
export function adaptiveStrategy(options: PacerOptions = {}): HerdStrategy {
  // Validates the pacer options once, up front, like every other strategy.
  new Pacer(options);
  return {
    name: 'adaptive',
    description:
      'kindly Pacer (default options) as downstream({ pacing: true }) runs it: a rejected call books its slot (pacer.reserve) and waits for it; the pacer learns from every answer',
    random: false,
    create(sim, _setup, wire): HerdClients {
      const api = new SimDownstream(
        sim,
        'server',
        { retry: ADAPTIVE_RETRY, attemptTimeoutMs: false, budget: false, pacing: options },
        { send: (client, attempt, now) => wire.send(client, attempt, now) },
        (end) => {
          if (!end.ok) wire.gaveUp(end.call, end.atMs);
        },
      );
      return {
        start: (client, now) => api.start(client, now),
        served: (client, now) => api.answer(client, now, undefined),
        rejected: (client, now) => api.answer(client, now, REJECTED),
      };
    },
  };
}

export const ADAPTIVE_HERD_STRATEGY: HerdStrategy = adaptiveStrategy();
