import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { downstream } from '../../src/index.js';
import { instrumentDownstreams } from '../../src/telemetry/opentelemetry.js';
import { SeededRandom, VirtualClock } from '../../src/testing/index.js';

/** A reader we can collect from on demand: the real SDK pipeline, no exporter. */
class CollectingReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

async function points(reader: CollectingReader): Promise<Map<string, number>> {
  const { resourceMetrics } = await reader.collect();
  const out = new Map<string, number>();
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      for (const p of metric.dataPoints) out.set(`${metric.descriptor.name}{${p.attributes.downstream}}`, p.value as number);
    }
  }
  return out;
}

describe('OpenTelemetry bridge', () => {
  it('reports each downstream’s stats through a real MeterProvider, and stops when asked', async () => {
    const reader = new CollectingReader();
    const provider = new MeterProvider({ readers: [reader] });
    const clock = new VirtualClock();
    const api = downstream('payments', { clock, random: new SeededRandom(1), retry: { backoff: { baseMs: 1, jitter: 'none' } } });
    const other = downstream('search', { clock });
    const stop = instrumentDownstreams([api, other], { meter: provider.getMeter('test') });

    let n = 0;
    const call = api.call(async () => {
      if (n++ === 0) throw Object.assign(new Error('busy'), { status: 503 });
      return 'ok';
    });
    await clock.runAll();
    await call;

    const seen = await points(reader);
    expect(seen.get('kindly.requests{payments}')).toBe(1);
    expect(seen.get('kindly.attempts{payments}')).toBe(2);
    expect(seen.get('kindly.retries{payments}')).toBe(1);
    expect(seen.get('kindly.retry.ratio{payments}')).toBe(1);
    expect(seen.get('kindly.retry.success_rate{payments}')).toBe(1);
    expect(seen.get('kindly.requests{search}')).toBe(0);

    stop();
    // A cumulative pipeline keeps the last value it saw; after stop() nothing new is read.
    const more = api.call(async () => 'again');
    await clock.runAll();
    await more;
    expect(api.stats().requests).toBe(2);
    const after = await points(reader);
    expect(after.get('kindly.requests{payments}')).toBe(1);
    await provider.shutdown();
  });

  it('reports the latency policies: hedges, the learned concurrency limit and the derived timeout', async () => {
    const reader = new CollectingReader();
    const provider = new MeterProvider({ readers: [reader] });
    const clock = new VirtualClock();
    const api = downstream('search', {
      clock,
      retry: false,
      concurrency: { probeConcurrency: 2 },
      attemptTimeoutMs: { minSamples: 1, floorMs: 1 },
      hedging: { delayMs: 5, maxExtraLoad: 1 },
    });
    const plain = downstream('plain', { clock });
    const stop = instrumentDownstreams([api, plain], { meter: provider.getMeter('test') });
    let n = 0;
    const call = api.call(({ signal }) => clock.sleep(n++ === 0 ? 100 : 10, signal).then(() => 'ok'));
    await clock.runAll();
    await call;
    const seen = await points(reader);
    expect(seen.get('kindly.hedges{search}')).toBe(1);
    expect(seen.get('kindly.hedge.wins{search}')).toBe(1);
    expect(seen.get('kindly.hedge.ratio{search}')).toBe(1);
    expect(seen.get('kindly.concurrency.limit{search}')).toBe(2);
    expect(seen.get('kindly.attempt.timeout{search}')).toBeGreaterThan(0);
    expect(seen.has('kindly.concurrency.limit{plain}')).toBe(false);
    stop();
    await provider.shutdown();
  });
});
