import type { Pacer } from '../policies/pacer.js';
import { FLEET_MAX_RATE } from './fleet-ledger.js';
import { RATE_PROBE, RATE_SHARE, RATE_WHOLE, type RateKindCode } from './fleet-store.js';

/** One process's word on the callee's rate, as the fleet's ledger combines it. */
export interface PaceContribution {
  /** Requests per ms (0: nothing to contribute: the pacer is not throttling). */
  rate: number;
  kind: RateKindCode;
  /** Paced requests served / rejected since the last report (`PacedAnswerTally`). */
  served: number;
  rejected: number;
  /** First tries sent unpaced while the fleet paced, since the last report (`PacedAnswerTally.sentFirst`). */
  unpaced: number;
}

/**
 * What one process has reported of its pacer's paced answers (`Pacer.pacedAnswers`) and of
 * the first tries it sent unpaced — each report carries those since the one before, so that
 * the fleet counts each once — and the fleet's estimate it last heard back.
 */
export class PacedAnswerTally {
  private served = 0;
  private rejected = 0;
  private unpaced = 0;
  /** The fleet's estimate in the store's latest reply to this process, requests per ms (0: none yet). */
  heardEstimate = 0;

  /** A first try left unpaced while the fleet paced: it takes a slot of the fleet's queue. */
  sentFirst(): void {
    this.unpaced++;
  }

  /** Fills `c` with the answers not yet reported, and counts them as reported. */
  take(pacer: Pacer, c: PaceContribution): void {
    const [served, rejected] = pacer.pacedAnswers;
    c.served = served - this.served;
    c.rejected = rejected - this.rejected;
    this.served = served;
    this.rejected = rejected;
    c.unpaced = this.unpaced;
    this.unpaced = 0;
  }

  /** A report that never reached the store: its answers go with the next one. */
  unsent(c: PaceContribution): void {
    this.served -= c.served;
    this.rejected -= c.rejected;
    this.unpaced += c.unpaced;
  }
}

const KIND_CODES = { share: RATE_SHARE, whole: RATE_WHOLE, probe: RATE_PROBE } as const;

/**
 * A measured share counts for at most this much more than what the process's paced requests
 * delivered lately. A pacer cuts to the peak of its delivery rate, and with a quarter of the
 * answers (four processes) that peak is a max over a few noisy samples: the fleet's sum of
 * such peaks ran 1.3–2× over the callee's rate in the simulator (leaky bucket, 4 × 25 callers).
 */
const SHARE_GAIN = 1.1;

/**
 * A guess at the callee's whole rate counts for at most this many times the fleet's estimate
 * the process last heard. A process following the fleet's queue grows its start-up guess on
 * every success, but what it sends is the queue's pace, not its guess: while first tries kept
 * its own retries waiting, one process's guess grew ~√2 every 50 ms to 1.6 × 10⁹/s (simulated,
 * four processes, 400 callers over 2 s) — and a guess above a million a second is dropped as
 * no measurement at all. The fleet still grows: its estimate may double with every reply.
 * (Simulated, four processes sharing, callers over 0.5–5 s: geometric mean of the worst of six
 * seeds 1.091 → 1.080× the bound's requests; a worker pool after three herds 623–652 → 621–629
 * requests.)
 */
const GUESS_LEAD = 2;

/** What `pacer` contributes to its fleet's rate at `nowMs`, with its answers not yet reported. */
export function paceContribution(pacer: Pacer, nowMs: number, tally: PacedAnswerTally): PaceContribution {
  const c: PaceContribution = { rate: 0, kind: RATE_SHARE, served: 0, rejected: 0, unpaced: 0 };
  tally.take(pacer, c);
  if (!pacer.throttling(nowMs)) return c;
  c.kind = KIND_CODES[pacer.rateKind(nowMs)];
  let rate = pacer.rate(nowMs) ?? 0;
  if (c.kind === RATE_SHARE) {
    const delivered = pacer.delivered(nowMs);
    if (delivered !== undefined && rate > SHARE_GAIN * delivered) rate = SHARE_GAIN * delivered;
  }
  c.rate = rate / 1000;
  const heard = tally.heardEstimate;
  if (c.kind === RATE_WHOLE && heard > 0 && c.rate > GUESS_LEAD * heard) c.rate = GUESS_LEAD * heard;
  return c;
}

/**
 * The fleet already knows the callee's rate (`estimate`, requests per ms, from a store's
 * reply): a pacer still searching adopts it instead of probing on its own. One process's
 * search serves the fleet; the others' probes would each cost the callee a rejection or more.
 */
export function adoptFleetEstimate(pacer: Pacer, estimate: number, nowMs: number): void {
  // Only a rate some process could have measured: a store's reply is not trusted beyond it
  // (an estimate of 1e308 per ms was adopted as an infinite rate).
  if (estimate > 0 && estimate <= FLEET_MAX_RATE && pacer.searching) pacer.adopt(estimate * 1000, nowMs);
}
