import { describe, expect, it } from 'vitest';
import { type DownstreamOptions, downstream, type PacerOptions } from '../../src/index.js';
import { SeededRandom, VirtualClock } from '../../src/testing/index.js';

/**
 * Which lanes outlive `maxKeys`: only those whose state still holds calls back (a break that
 * runs, a probe out, a pacer throttling). Lanes are counted through `toJSON()`, which lists one
 * breaker per lane held.
 */

function answer(status: number, headers: Record<string, string> = {}): Error {
  return Object.assign(new Error(`HTTP ${status}`), { status, response: { status, headers } });
}

const unavailable = () => Promise.reject(answer(503));
const ok = async () => 'ok';

/** Two lanes at most, each with a pacer; `lanes()` lists the keys held. */
function pacedLanes(pacing: PacerOptions) {
  const clock = new VirtualClock();
  const api = downstream('svc', {
    clock,
    random: new SeededRandom(1),
    retry: false,
    budget: false,
    // A 429 is no breaker failure: the breaker is here to list the lanes held.
    breaker: true,
    pacing,
    maxKeys: 2,
  });
  return { clock, api, lanes: () => Object.keys(api.toJSON().breakers) };
}

function crawler(options: DownstreamOptions = {}) {
  const clock = new VirtualClock();
  const api = downstream('crawler', {
    clock,
    random: new SeededRandom(7),
    retry: false,
    budget: false,
    breaker: { threshold: 1, breakMs: 1_000, maxBreakMs: 1_000 },
    maxKeys: 10,
    ...options,
  });
  const lanes = () => Object.keys(api.toJSON().breakers);
  return { clock, api, lanes };
}

describe('lane eviction', () => {
  it('lanes of dead hosts never called again are dropped once their breaks are over', async () => {
    const { clock, api, lanes } = crawler();
    for (let i = 0; i < 1_000; i++) await api.call(unavailable, { key: `dead-${i}` }).catch(() => {});
    // Every break still runs: all of them are kept.
    expect(lanes()).toHaveLength(1_000);
    await clock.advance(3_600_000);
    for (let i = 0; i < 1_000; i++) await api.call(ok, { key: `live-${i}` });
    expect(lanes()).toHaveLength(10);
  });

  it('a steady stream of dead hosts holds maxKeys lanes plus those whose break still runs', async () => {
    const { clock, api, lanes } = crawler();
    let most = 0;
    // One new dead host every 100 ms, breaks of 1 s (± 10 % jitter): about 11 breaks run at once.
    for (let i = 0; i < 1_000; i++) {
      await api.call(unavailable, { key: `dead-${i}` }).catch(() => {});
      most = Math.max(most, lanes().length);
      await clock.advance(100);
    }
    expect(most).toBeLessThanOrEqual(10 + 12);
  });

  it('the eviction scan reads breakers without moving them: no onStateChange during a call to another key', async () => {
    const changes: string[] = [];
    const { clock, api } = crawler({
      maxKeys: 2,
      breaker: {
        threshold: 1,
        breakMs: 1_000,
        maxBreakMs: 1_000,
        onStateChange: (from, to) => changes.push(`${from}→${to}`),
      },
    });
    await api.call(unavailable, { key: 'dead' }).catch(() => {});
    await api.call(ok, { key: 'a' });
    await clock.advance(5_000);
    // Inserting `b` scans `dead`, the least recently used lane, whose break is over.
    await api.call(ok, { key: 'b' });
    await api.call(ok, { key: 'c' });
    expect(changes).toEqual(['closed→open']);
  });

  it('a half-open lane with its probe out is kept, and the probe’s answer closes that breaker', async () => {
    const { clock, api, lanes } = crawler();
    await api.call(unavailable, { key: 'dead' }).catch(() => {});
    await clock.advance(5_000);
    let answerProbe: (value: string) => void = () => {};
    const probe = api.call(() => new Promise<string>((resolve) => (answerProbe = resolve)), { key: 'dead' });
    await clock.advance(0);
    expect(api.breakerState('dead')).toBe('half-open');
    for (let i = 0; i < 50; i++) await api.call(ok, { key: `live-${i}` });
    expect(lanes()).toContain('dead');
    answerProbe('back');
    await expect(probe).resolves.toBe('back');
    expect(api.breakerState('dead')).toBe('closed');
  });

  it('a lane isolated by hand is kept however many keys pass', async () => {
    const { clock, api } = crawler();
    api.isolateBreaker('held');
    await clock.advance(3_600_000);
    for (let i = 0; i < 100; i++) await api.call(ok, { key: `live-${i}` });
    expect(api.breakerState('held')).toBe('open');
  });

  it('a lane whose pacer holds a callee’s Retry-After is kept: the next call still waits for it; then it is dropped', async () => {
    const { clock, api, lanes } = pacedLanes({ paceFirstAttempts: true });
    const sent: string[] = [];
    const op = (key: string, reply: () => Promise<string>) => () => {
      sent.push(`${key}@${clock.monotonic()}`);
      return reply();
    };
    const slowDown = () => Promise.reject(answer(429, { 'retry-after': '30' }));
    await api.call(op('A', slowDown), { key: 'A' }).catch(() => {});
    await api.call(op('B', ok), { key: 'B' });
    await api.call(op('C', ok), { key: 'C' });
    const next = api.call(op('A', ok), { key: 'A', timeoutMs: 60_000 });
    await clock.advance(29_000);
    expect(sent).toEqual(['A@0', 'B@0', 'C@0']);
    await clock.advance(2_000);
    await expect(next).resolves.toBe('ok');
    expect(sent[3]).toMatch(/^A@3\d{4}$/);
    // The hint is over and the pacer quiet: A's lane is an ordinary one again.
    await clock.advance(60_000);
    await api.call(op('D', ok), { key: 'D' });
    await api.call(op('E', ok), { key: 'E' });
    expect(lanes().sort()).toEqual(['D', 'E']);
  });

  it('a lane whose pacer throttles after a 429 without a hint is kept until quietMs has passed', async () => {
    const { clock, api, lanes } = pacedLanes({ quietMs: 2_000 });
    await api.call(() => Promise.reject(answer(429)), { key: 'A' }).catch(() => {});
    await api.call(ok, { key: 'B' });
    await api.call(ok, { key: 'C' });
    expect(lanes()).toContain('A');
    await clock.advance(2_000);
    await api.call(ok, { key: 'D' });
    await api.call(ok, { key: 'E' });
    expect(lanes()).not.toContain('A');
    expect(lanes().length).toBeLessThanOrEqual(2);
  });
});
