import { describe, expect, it } from 'vitest';
import {
  type BreakerState,
  type CircuitBreakerSnapshot,
  downstream,
  type GiveUpError,
  InvalidOptionsError,
} from '../../src/index.js';
import { CircuitBreaker } from '../../src/policies/index.js';
import { SeededRandom, VirtualClock } from '../../src/testing/index.js';

/**
 * Breaker control by hand, as users of opossum and Polly expect: read the state, isolate
 * (hold open) and close, and save / restore state across processes (cockatiel's
 * toJSON / initialState).
 */
const failure = Object.assign(new Error('HTTP 503'), { status: 503 });

function breaker(changes: Array<[BreakerState, BreakerState]> = []) {
  return new CircuitBreaker(
    { threshold: 2, breakMs: 1_000, breakJitter: 0, onStateChange: (from, to) => changes.push([from, to]) },
    new SeededRandom(3),
  );
}

describe('CircuitBreaker by hand', () => {
  it('isolate holds it open past any break until close; close forgets the failures', () => {
    const changes: Array<[BreakerState, BreakerState]> = [];
    const b = breaker(changes);
    b.onFailure(0, b.tryAcquire(0));
    b.isolate(10);
    expect(b.state(10)).toBe('open');
    expect(b.isolated).toBe(true);
    expect(b.tryAcquire(1_000_000)).toBe(-1);
    expect(b.state(1_000_000)).toBe('open');
    expect(b.retryAfterMs(20)).toBeUndefined();
    b.close(1_000_001);
    expect(b.state(1_000_001)).toBe('closed');
    expect(b.isolated).toBe(false);
    // The failure before the isolation is forgotten: one more failure does not trip it.
    b.onFailure(1_000_002, b.tryAcquire(1_000_002));
    expect(b.state(1_000_002)).toBe('closed');
    expect(changes).toEqual([
      ['closed', 'open'],
      ['open', 'closed'],
    ]);
  });

  it('close during a break ends it; a probe admitted before is ignored when it reports', () => {
    const b = breaker();
    b.onFailure(0, b.tryAcquire(0));
    b.onFailure(0, b.tryAcquire(0));
    expect(b.state(0)).toBe('open');
    const probe = b.tryAcquire(1_000);
    expect(probe).toBeGreaterThan(0);
    b.close(1_001);
    b.onFailure(1_002, probe); // late result of the old probe: no effect
    expect(b.state(1_002)).toBe('closed');
  });

  it('snapshot / restore carries an open break, its time left and the openings in a row', () => {
    const a = breaker();
    a.onFailure(0, a.tryAcquire(0));
    a.onFailure(0, a.tryAcquire(0)); // opens for 1 000 ms
    const saved: CircuitBreakerSnapshot = JSON.parse(JSON.stringify(a.snapshot(400)));
    expect(saved).toEqual({ state: 'open', breakLeftMs: 600, opensInRow: 1, consecutiveFailures: 0, isolated: false });

    const b = breaker(); // another process: its own monotonic clock
    b.restore(saved, 50_000);
    expect(b.state(50_599)).toBe('open');
    expect(b.retryAfterMs(50_000)).toBe(600);
    expect(b.state(50_600)).toBe('half-open');
    b.onFailure(50_600, b.tryAcquire(50_600)); // the probe fails: the next break grows (2nd in a row)
    expect(b.lastBreakMs).toBe(2_000);
  });

  it('restore refuses what is not a snapshot, listing every problem, and changes nothing', () => {
    // An open breaker, one opening in a row: a restore that applied any field before refusing would show.
    const b = breaker();
    b.onFailure(0, b.tryAcquire(0));
    b.onFailure(0, b.tryAcquire(0));
    const before = b.snapshot(100);
    expect(before.state).toBe('open');
    expect(() => b.restore({ state: 'ajar', breakLeftMs: -1, opensInRow: 1.5 } as never, 100)).toThrow(InvalidOptionsError);
    let refused: unknown;
    try {
      b.restore({ state: 'closed', breakLeftMs: -1, opensInRow: 1.5, extra: 1 } as never, 100);
    } catch (error) {
      refused = error;
    }
    expect((refused as InvalidOptionsError).problems).toEqual([
      expect.stringContaining('Unknown option `extra`'),
      'Expected `breakLeftMs` ≥ 0, got -1',
      'Expected `opensInRow` to be an integer ≥ 0, got 1.5',
    ]);
    try {
      b.restore({ state: 'ajar' } as never, 100);
    } catch (error) {
      refused = error;
    }
    expect((refused as InvalidOptionsError).problems).toContain("Expected `state` to be one of 'closed', 'open', got \"ajar\"");
    expect(b.snapshot(100)).toEqual(before);
  });
});

describe('Downstream breaker control, per lane', () => {
  function setup() {
    const clock = new VirtualClock();
    const api = downstream('payments', { clock, random: new SeededRandom(4), retry: false, budget: false, breaker: true });
    return { clock, api };
  }

  it('reads, isolates and closes one lane without touching another', async () => {
    const { api } = setup();
    expect(api.breakerState()).toBe('closed');
    api.isolateBreaker('eu');
    expect(api.breakerState('eu')).toBe('open');
    expect(api.breakerState('us')).toBe('closed');
    const error = (await api.call(async () => 'x', { key: 'eu' }).catch((e: unknown) => e)) as GiveUpError;
    expect(error.reason).toBe('circuit-open');
    expect(await api.call(async () => 'us works', { key: 'us' })).toBe('us works');
    api.closeBreaker('eu');
    expect(await api.call(async () => 'eu works', { key: 'eu' })).toBe('eu works');
  });

  it('toJSON / restore moves lanes to a new downstream (a restarted process)', async () => {
    const { api } = setup();
    for (let i = 0; i < 5; i++) await api.call(() => Promise.reject(failure), { key: 'eu' }).catch(() => undefined);
    api.isolateBreaker('us');
    const saved = JSON.parse(JSON.stringify(api));
    expect(saved.downstream).toBe('payments');
    expect(Object.keys(saved.breakers).sort()).toEqual(['eu', 'us']);

    const next = setup().api;
    next.restore(saved);
    expect(next.breakerState('eu')).toBe('open');
    expect(next.breakerState('us')).toBe('open');
    expect(() => next.restore({ downstream: 'payments', breakers: { eu: { state: 'x' } as never } })).toThrow(
      /breakers\.eu: Expected `state`/,
    );
  });

  it('a downstream without a breaker says so', () => {
    const plain = downstream('plain');
    expect(() => plain.breakerState()).toThrow("downstream 'plain' has no breaker (set `breaker: true`)");
    expect(() => plain.isolateBreaker()).toThrow(TypeError);
  });
});
