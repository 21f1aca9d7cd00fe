import { describe, expect, it } from 'vitest';
import { downstream, isGiveUpError } from '../../src/index.js';
import { SeededRandom, VirtualClock } from '../../src/testing/index.js';

const unavailable = () => Object.assign(new Error('HTTP 503'), { status: 503 });

describe('per-key lanes (regression)', () => {
  it('regression: an open breaker is never evicted — its dead callee is not reached during the break, however many keys pass', async () => {
    const clock = new VirtualClock();
    const api = downstream('c', {
      clock,
      random: new SeededRandom(5),
      retry: false,
      budget: false,
      breaker: { threshold: 2, breakMs: 60_000 },
      maxKeys: 1_000,
    });
    let reachedHot = 0;
    const hot = () => {
      reachedHot++;
      return Promise.reject(unavailable());
    };
    for (let i = 0; i < 2; i++) await api.call(hot, { key: 'hot' }).catch(() => {});
    expect(api.breakerState('hot')).toBe('open');
    const before = reachedHot;
    // 1,000 × (a fresh key, then `hot`), and then 1,000 fresh keys in a row without `hot`.
    for (let i = 0; i < 1_000; i++) {
      await api.call(async () => 'ok', { key: `fresh-${i}` });
      const error = await api.call(hot, { key: 'hot' }).catch((e: unknown) => e);
      expect(isGiveUpError(error) && error.reason).toBe('circuit-open');
    }
    for (let i = 0; i < 1_000; i++) await api.call(async () => 'ok', { key: `other-${i}` });
    const error = await api.call(hot, { key: 'hot' }).catch((e: unknown) => e);
    expect(isGiveUpError(error) && error.reason).toBe('circuit-open');
    expect(reachedHot - before).toBe(0);
    expect(api.breakerState('hot')).toBe('open');
  });

  it('lanes are evicted least recently used first: a key in use stays, the idle oldest goes', async () => {
    const clock = new VirtualClock();
    const api = downstream('c', { clock, budget: false, breaker: true, maxKeys: 3 });
    const ok = async () => 'ok';
    await api.call(ok, { key: 'a' });
    await api.call(ok, { key: 'b' });
    await api.call(ok, { key: 'c' });
    await api.call(ok, { key: 'a' }); // a is now the most recent
    await api.call(ok, { key: 'd' }); // evicts b, the least recently used
    expect(Object.keys(api.toJSON().breakers).sort()).toEqual(['a', 'c', 'd']);
  });
});
