import { Downstream, type DownstreamOptions } from './downstream.js';
import { LITE_DOWNSTREAM_POLICIES } from './downstream-policies.js';

/**
 * A downstream's options without the policies `kindly-calls/lite` leaves out: no `pacing`,
 * `concurrency` or `hedging`, and an attempt timeout that is a number (or `false`), never
 * derived from measured latency.
 */
export type LiteDownstreamOptions = Omit<DownstreamOptions, 'pacing' | 'concurrency' | 'hedging' | 'attemptTimeoutMs'> & {
  /** Per-attempt timeout in ms, or `false` for none. @default {@link DOWNSTREAM_DEFAULTS}.attemptTimeoutMs */
  attemptTimeoutMs?: number | false;
};

/**
 * Creates a downstream as the root entry's `downstream()` does, without adaptive pacing and the
 * latency policies: a bundler leaves their code out of an app that imports this one.
 */
export function downstream(name: string, options?: LiteDownstreamOptions): Downstream {
  return new Downstream(name, options, LITE_DOWNSTREAM_POLICIES);
}
