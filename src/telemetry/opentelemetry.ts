/**
 * OpenTelemetry for kindly downstreams, as the `kindly-calls/otel` subpath
 * (`@opentelemetry/api` is an optional peer dependency, loaded only by this module).
 *
 * - With a `meter`: the stats as observable instruments, read from `downstream.stats()` once
 *   per collection (no work on the call path; attribute `downstream`), and histograms of
 *   attempt durations, retry waits, pacing delays and call durations (see `otel-calls.ts`).
 * - With a `tracer`: a span per call and per attempt, following the HTTP client conventions.
 */
import type { BatchObservableResult, Meter, Observable, TextMapPropagator, Tracer } from '@opentelemetry/api';
import { OptionsValidator } from '../options/validate.js';
import type { Downstream } from '../runtime/downstream.js';
import { instrumentCalls } from './otel-calls.js';
import type { StatsSnapshot } from './stats.js';

export interface OpenTelemetryOptions {
  /** Metrics: the stats as observable instruments, and the histograms. */
  meter?: Meter;
  /** Traces: a span per logical call and per attempt. */
  tracer?: Tracer;
  /**
   * Injects trace context into outbound HTTP requests and gRPC metadata.
   * @default the global propagator: nothing is injected unless your OpenTelemetry setup registered one
   */
  propagator?: TextMapPropagator;
  /** Prefix of kindly's own instrument names. @default 'kindly' */
  prefix?: string;
}

/** Instrument name (after the prefix) → how it is read from a stats snapshot. */
const COUNTERS = {
  requests: { unit: '{call}', read: (s: StatsSnapshot) => s.requests, description: 'Logical calls started' },
  attempts: { unit: '{attempt}', read: (s: StatsSnapshot) => s.attempts, description: 'Attempts made (first tries and retries)' },
  retries: { unit: '{attempt}', read: (s: StatsSnapshot) => s.retries, description: 'Retries made' },
  successes: { unit: '{call}', read: (s: StatsSnapshot) => s.successes, description: 'Calls that succeeded' },
  failures: { unit: '{call}', read: (s: StatsSnapshot) => s.failures, description: 'Calls that gave up or were rejected' },
  timeouts: { unit: '{attempt}', read: (s: StatsSnapshot) => s.timeouts, description: 'Attempts that timed out' },
  'retry.added_latency': {
    unit: 'ms',
    read: (s: StatsSnapshot) => s.addedLatencyMs,
    description: 'Latency that retries added to successful calls',
  },
  'breaker.opens': { unit: '{event}', read: (s: StatsSnapshot) => s.breakerOpens, description: 'Times a circuit breaker opened' },
  'budget.rejections': {
    unit: '{attempt}',
    read: (s: StatsSnapshot) => s.budgetRejections,
    description: 'Retries refused by the retry budget',
  },
  'bulkhead.rejections': {
    unit: '{call}',
    read: (s: StatsSnapshot) => s.bulkheadRejections,
    description: 'Calls rejected by a full bulkhead',
  },
  fallbacks: { unit: '{call}', read: (s: StatsSnapshot) => s.fallbacks, description: 'Calls answered by a fallback' },
  'pacing.delays': { unit: '{attempt}', read: (s: StatsSnapshot) => s.pacingDelays, description: 'Attempts held back by pacing' },
  'pacing.delay': {
    unit: 'ms',
    read: (s: StatsSnapshot) => s.pacingDelayMs,
    description: 'Time attempts spent held back by pacing',
  },
  hedges: { unit: '{attempt}', read: (s: StatsSnapshot) => s.hedges, description: 'Hedges sent (extra attempts)' },
  'hedge.wins': { unit: '{call}', read: (s: StatsSnapshot) => s.hedgeWins, description: 'Calls answered by a hedge' },
  'concurrency.rejections': {
    unit: '{attempt}',
    read: (s: StatsSnapshot) => s.concurrencyRejections,
    description: 'Attempts refused by the adaptive concurrency limit',
  },
} as const;

const GAUGES = {
  'retry.ratio': { unit: '1', read: (s: StatsSnapshot) => s.retryRatio, description: 'Retries per call' },
  'retry.success_rate': {
    unit: '1',
    read: (s: StatsSnapshot) => s.retrySuccessRate,
    description: 'Share of retried calls that finally succeeded',
  },
  'timeout.ratio': { unit: '1', read: (s: StatsSnapshot) => s.timeoutRatio, description: 'Timeouts per attempt' },
  'bulkhead.queue_depth': { unit: '{call}', read: (s: StatsSnapshot) => s.queueDepth, description: 'Calls waiting for a slot' },
  in_flight: { unit: '{attempt}', read: (s: StatsSnapshot) => s.inFlight, description: 'Attempts running now' },
  'hedge.ratio': { unit: '1', read: (s: StatsSnapshot) => s.hedgeRatio, description: 'Hedges per call (extra load)' },
  // Reported only for downstreams that have the policy (no data point otherwise).
  'concurrency.limit': {
    unit: '{attempt}',
    read: (s: StatsSnapshot) => s.concurrencyLimit,
    description: 'Learned adaptive concurrency limit, summed over keys',
  },
  'attempt.timeout': {
    unit: 'ms',
    read: (s: StatsSnapshot) => s.attemptTimeoutMs,
    description: 'Longest derived attempt timeout in force',
  },
} as const;

/**
 * Reports `downstreams` through `meter` and `tracer` (give either or both). Returns a
 * function that stops reporting (removes the callbacks, spans and histograms).
 */
export function instrumentDownstreams(
  downstreams: Downstream | readonly Downstream[],
  options: OpenTelemetryOptions,
): () => void {
  const v = new OptionsValidator('instrumentDownstreams');
  v.knownKeys(options, ['meter', 'tracer', 'propagator', 'prefix']);
  v.check(options?.meter !== undefined || options?.tracer !== undefined, 'Expected a `meter`, a `tracer` or both, got neither');
  v.done();
  const list = Array.isArray(downstreams) ? [...(downstreams as readonly Downstream[])] : [downstreams as Downstream];
  const stops = list.map((d) => instrumentCalls(d, options));
  const meter = options.meter;
  if (meter === undefined) {
    return () => {
      for (const stop of stops) stop();
    };
  }
  const prefix = options.prefix ?? 'kindly';
  const readers: Array<{ instrument: Observable; read: (s: StatsSnapshot) => number | undefined }> = [];
  for (const [name, spec] of Object.entries(COUNTERS)) {
    const instrument = meter.createObservableCounter(`${prefix}.${name}`, { unit: spec.unit, description: spec.description });
    readers.push({ instrument, read: spec.read });
  }
  for (const [name, spec] of Object.entries(GAUGES)) {
    const instrument = meter.createObservableGauge(`${prefix}.${name}`, { unit: spec.unit, description: spec.description });
    readers.push({ instrument, read: spec.read });
  }
  const callback = (result: BatchObservableResult) => {
    for (const downstream of list) {
      const stats = downstream.stats();
      const attributes = { downstream: downstream.name };
      for (const r of readers) {
        const value = r.read(stats);
        if (value !== undefined) result.observe(r.instrument, value, attributes);
      }
    }
  };
  const instruments = readers.map((r) => r.instrument);
  meter.addBatchObservableCallback(callback, instruments);
  return () => {
    meter.removeBatchObservableCallback(callback, instruments);
    for (const stop of stops) stop();
  };
}
