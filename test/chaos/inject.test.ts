import { afterEach, describe, expect, it } from 'vitest';
import { ChaosDependency, ChaosFaultError, enableChaos } from '../../src/chaos/index.js';
import { isGiveUpError } from '../../src/errors/errors.js';
import { fetchThrough } from '../../src/http/index.js';
import { SeededRandom } from '../../src/random/random.js';
import { downstream } from '../../src/runtime/downstream.js';
import { Dependency } from '../../src/sim/dependency.js';
import type { KindlyEvent } from '../../src/telemetry/events.js';
import { VirtualClock } from '../../src/time/virtual-clock.js';
import { type Loopback, listen } from '../http/support/loopback.js';

const on = { dangerouslyEnableChaos: true } as const;
const constant = (base: number) => ({ shape: 'constant' as const, baseMs: base, jitter: 'none' as const });

async function settle<T>(clock: VirtualClock, promise: Promise<T>): Promise<T | unknown> {
  const caught = promise.catch((e: unknown) => e);
  await clock.runAll();
  return caught;
}

describe('enableChaos: explicit opt-in', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env.NODE_ENV = saved.NODE_ENV;
    if (saved.KINDLY_CHAOS === undefined) delete process.env.KINDLY_CHAOS;
    else process.env.KINDLY_CHAOS = saved.KINDLY_CHAOS;
  });

  it('refuses without dangerouslyEnableChaos: true', () => {
    const d = downstream('x');
    expect(() => enableChaos(d, { faults: [] } as never)).toThrow(/dangerouslyEnableChaos: true/);
    expect(() => enableChaos(d, { faults: [], dangerouslyEnableChaos: 'yes' } as never)).toThrow(/dangerouslyEnableChaos/);
  });

  it('refuses where NODE_ENV=production unless KINDLY_CHAOS=1 as well', () => {
    process.env.NODE_ENV = 'production';
    delete process.env.KINDLY_CHAOS;
    const d = downstream('x');
    expect(() => enableChaos(d, { ...on, faults: [] })).toThrow(/KINDLY_CHAOS=1/);
    process.env.KINDLY_CHAOS = '1';
    const stop = enableChaos(d, { ...on, faults: [] });
    stop();
  });

  it.each(['Production', 'PRODUCTION', ' production', 'production\n'])(
    'NODE_ENV=%j is production too: refused unless KINDLY_CHAOS=1',
    (nodeEnv) => {
      process.env.NODE_ENV = nodeEnv;
      delete process.env.KINDLY_CHAOS;
      const d = downstream('x');
      expect(() => enableChaos(d, { ...on, faults: [] })).toThrow(/KINDLY_CHAOS=1/);
      process.env.KINDLY_CHAOS = '1';
      enableChaos(d, { ...on, faults: [] })();
    },
  );

  it('other NODE_ENV values need no KINDLY_CHAOS', () => {
    delete process.env.KINDLY_CHAOS;
    for (const nodeEnv of ['development', 'test', 'staging', 'productionish']) {
      process.env.NODE_ENV = nodeEnv;
      enableChaos(downstream('x'), { ...on, faults: [] })();
    }
  });
});

describe('enableChaos: faults inside the pipeline', () => {
  it('injected refusals open the breaker of their key only; each is a chaos event and counted in stats', async () => {
    const clock = new VirtualClock();
    const d = downstream('api', {
      clock,
      random: new SeededRandom(1),
      retry: false,
      budget: false,
      breaker: { mode: 'consecutive', threshold: 3, breakMs: 60_000 },
    });
    enableChaos(d, { ...on, faults: [{ kind: 'error', rate: 1, outcome: 'failed', key: 'eu' }] });
    const events: KindlyEvent[] = [];
    d.onAny((e) => events.push(e));
    let reached = 0;
    const op = async () => ++reached;
    for (let i = 0; i < 5; i++) await settle(clock, d.call(op, { key: 'eu' }));
    expect(await d.call(op, { key: 'us' })).toBe(1);
    expect(reached).toBe(1);
    const chaos = events.filter((e) => e.type === 'chaos');
    expect(chaos).toHaveLength(3);
    expect(chaos[0]).toMatchObject({ key: 'eu', attempt: 1, fault: 'error', outcome: 'failed' });
    expect(events.filter((e) => e.type === 'breaker-state').map((e) => e.type === 'breaker-state' && `${e.key}:${e.to}`)).toEqual(
      ['eu:open'],
    );
    expect(events.filter((e) => e.type === 'give-up').map((e) => e.type === 'give-up' && e.reason)).toEqual([
      'max-attempts',
      'max-attempts',
      'max-attempts',
      'circuit-open',
      'circuit-open',
    ]);
    expect(d.stats()).toMatchObject({ chaosInjected: 3, breakerOpens: 1 });
  });

  it('an injected 429 with Retry-After is read like a real one: the retry waits the hint', async () => {
    const clock = new VirtualClock();
    const d = downstream('api', {
      clock,
      random: new SeededRandom(1),
      retry: { maxAttempts: 2, backoff: constant(10) },
      budget: false,
    });
    enableChaos(d, { ...on, faults: [{ kind: 'status', rate: 1, status: 429, headers: { 'retry-after': '2' } }] });
    const scheduled: Array<number | undefined> = [];
    const sources: Array<string | undefined> = [];
    d.on('retry-scheduled', (e) => {
      scheduled.push(e.hintMs);
      sources.push(e.hintSource);
    });
    const error = await settle(
      clock,
      d.call(async () => 'ok'),
    );
    expect(sources).toEqual(['retry-after']);
    expect(scheduled[0]).toBeGreaterThanOrEqual(2_000);
    expect(clock.monotonic()).toBeGreaterThanOrEqual(2_000);
    expect((error as Error).cause).toMatchObject({ name: 'HttpStatusError', status: 429 });
    expect(d.stats()).toMatchObject({ attempts: 2, chaosInjected: 2 });
  });

  it('injected latency is cut by the attempt timeout; the retry then succeeds', async () => {
    const clock = new VirtualClock();
    const d = downstream('api', { clock, random: new SeededRandom(1), attemptTimeoutMs: 100, retry: { backoff: constant(1) } });
    // seed 5 draws the fault for the first attempt of key 'api' and not for the second (checked below)
    enableChaos(d, { ...on, seed: 5, faults: [{ kind: 'latency', rate: 0.5, ms: 1_000 }] });
    const ends: string[] = [];
    d.on('attempt-end', (e) => ends.push(`${e.attempt}:${e.outcome}:${e.durationMs}`));
    const chaos: number[] = [];
    d.on('chaos', (e) => chaos.push(e.attempt));
    const value = await settle(
      clock,
      d.call(async () => 'ok'),
    );
    expect(chaos[0]).toBe(1);
    expect(ends[0]).toBe('1:unknown:100');
    expect(ends).toEqual(['1:unknown:100', '2:ok:0']);
    expect(value).toBe('ok');
    expect(d.stats().timeouts).toBeGreaterThanOrEqual(1);
  });

  it('a timeout fault hangs until kindly’s attempt timeout', async () => {
    const clock = new VirtualClock();
    const d = downstream('api', { clock, random: new SeededRandom(1), attemptTimeoutMs: 250, retry: false });
    enableChaos(d, { ...on, faults: [{ kind: 'timeout', rate: 1 }] });
    const error = await settle(
      clock,
      d.call(async () => 'never'),
    );
    expect(isGiveUpError(error)).toBe(true);
    expect((error as Error).cause).toMatchObject({ name: 'AttemptTimeoutError', timeoutMs: 250 });
    expect(clock.monotonic()).toBe(250);
  });

  it('error: unknown runs the operation and loses its answer, so a non-idempotent call is not retried', async () => {
    const d = downstream('writes', { retry: { maxAttempts: 3 }, budget: false });
    enableChaos(d, { ...on, faults: [{ kind: 'error', rate: 1, outcome: 'unknown' }] });
    let ran = 0;
    const reasons: string[] = [];
    d.on('give-up', (e) => reasons.push(e.reason));
    const error = await d.call(async () => ++ran, { idempotent: false }).catch((e: unknown) => e);
    expect(ran).toBe(1);
    expect(reasons).toEqual(['not-idempotent']);
    expect((error as Error).cause).toBeInstanceOf(ChaosFaultError);
  });

  it('resets before the answer: ECONNRESET, outcome unknown, the operation never runs', async () => {
    const d = downstream('api', { retry: false });
    enableChaos(d, { ...on, faults: [{ kind: 'reset', rate: 1 }] });
    let ran = 0;
    const outcomes: string[] = [];
    d.on('attempt-end', (e) => outcomes.push(e.outcome));
    await d.call(async () => ++ran).catch(() => undefined);
    expect(ran).toBe(0);
    expect(outcomes).toEqual(['unknown']);
  });

  it("stopping chaos during a call's backoff spares its retry: the operation runs and answers", async () => {
    const clock = new VirtualClock();
    const d = downstream('api', {
      clock,
      random: new SeededRandom(1),
      retry: { maxAttempts: 3, backoff: constant(200) },
      budget: false,
    });
    const stop = enableChaos(d, { ...on, faults: [{ kind: 'error', rate: 1, outcome: 'failed' }] });
    // Stopped while the first retry is waiting: the call started with chaos on.
    d.on('retry-scheduled', () => stop());
    let reached = 0;
    const value = await settle(
      clock,
      d.call(async () => ++reached),
    );
    expect(value).toBe(1);
    expect(reached).toBe(1);
    expect(d.stats()).toMatchObject({ attempts: 2, chaosInjected: 1, successes: 1 });
  });

  it('with .fetch(): injected 503s never reach the real server; the breaker and stats see them', async () => {
    let served = 0;
    const server: Loopback = await listen((_req, res) => {
      served++;
      res.writeHead(200).end('ok');
    });
    try {
      const d = downstream('api', { retry: { maxAttempts: 4, backoff: constant(1) }, budget: false });
      // Seed 11 on key 'inventory': attempts 1 and 2 get the 503, attempt 3 goes through.
      enableChaos(d, { ...on, seed: 11, faults: [{ kind: 'status', rate: 0.5, status: 503 }] });
      const statuses: number[] = [];
      d.on('chaos', (e) => statuses.push(e.status ?? 0));
      const response = await fetchThrough(d, server.url, { key: 'inventory' });
      expect(response.status).toBe(200);
      expect(served).toBe(1);
      expect(statuses).toEqual([503, 503]);
      expect(d.stats().attempts).toBe(statuses.length + 1);
      expect(d.stats().chaosInjected).toBe(statuses.length);
      expect(statuses.every((s) => s === 503)).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe('enableChaos with .fetch(): an injected status ends the call like a real one', () => {
  it('resolves with the injected response (headers included) when retries run out; rejects with throwHttpErrors', async () => {
    let served = 0;
    const server: Loopback = await listen((_req, res) => {
      served++;
      res.writeHead(200).end();
    });
    try {
      const d = downstream('api', { retry: { maxAttempts: 2, backoff: constant(1) }, budget: false });
      enableChaos(d, { ...on, faults: [{ kind: 'status', rate: 1, status: 503, headers: { 'retry-after': '0' } }] });
      const response = await fetchThrough(d, server.url);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('0');
      const error = await fetchThrough(d, server.url, { throwHttpErrors: true }).catch((e: unknown) => e);
      expect(isGiveUpError(error)).toBe(true);
      expect(served).toBe(0);
    } finally {
      await server.close();
    }
  });
});

describe('enableChaos with .fetch(): the injected response reads like a real one', () => {
  it('status, reason phrase and headers as a real server answering the same status', async () => {
    const headers = { 'retry-after': '0', 'x-served-by': 'edge-7' };
    const down: Loopback = await listen((_req, res) => {
      res.writeHead(503, headers).end();
    });
    const up: Loopback = await listen((_req, res) => {
      res.writeHead(200).end();
    });
    try {
      const retry = { retry: { maxAttempts: 2, backoff: constant(1) }, budget: false } as const;
      const real = await fetchThrough(downstream('real', retry), down.url);
      const d = downstream('injected', retry);
      enableChaos(d, { ...on, faults: [{ kind: 'status', rate: 1, status: 503, headers }] });
      const injected = await fetchThrough(d, up.url);
      const read = (r: Response) => ({
        status: r.status,
        statusText: r.statusText,
        retryAfter: r.headers.get('retry-after'),
        servedBy: r.headers.get('x-served-by'),
      });
      expect(read(real)).toEqual({ status: 503, statusText: 'Service Unavailable', retryAfter: '0', servedBy: 'edge-7' });
      expect(read(injected)).toEqual(read(real));
      await real.body?.cancel();
    } finally {
      await down.close();
      await up.close();
    }
  });
});

describe('the simulator draws the same faults as the runtime', () => {
  it('ChaosDependency and enableChaos, same plan and key: the same attempts get the same faults', async () => {
    const faults = [
      { kind: 'error' as const, rate: 0.2, outcome: 'failed' as const },
      { kind: 'timeout' as const, rate: 0.1 },
    ];
    const simulated = new ChaosDependency(new Dependency(), { faults, seed: 11 }, 'api');
    const simKinds: string[] = [];
    for (let i = 0; i < 50; i++) {
      const before = simulated.injected;
      const { answer } = simulated.call(i);
      simKinds.push(simulated.injected === before ? 'none' : answer === 2 ? 'timeout' : 'error');
    }
    const clock = new VirtualClock();
    const d = downstream('api', { clock, attemptTimeoutMs: 5, retry: false, budget: false });
    enableChaos(d, { ...on, faults, seed: 11 });
    const runtimeKinds: string[] = [];
    d.on('attempt-start', () => runtimeKinds.push('none'));
    d.on('chaos', (e) => {
      runtimeKinds[runtimeKinds.length - 1] = e.fault;
    });
    for (let i = 0; i < 50; i++)
      await settle(
        clock,
        d.call(async () => 1),
      );
    expect(runtimeKinds).toEqual(simKinds);
    expect(simulated.injected).toBeGreaterThan(5);
  });
});
