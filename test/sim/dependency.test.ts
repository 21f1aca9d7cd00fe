import { describe, expect, it } from 'vitest';
import { ANSWER_HANG, ANSWER_OK, ANSWER_REFUSED, Dependency } from '../../src/sim/dependency.js';

describe('Dependency', () => {
  it('is down only within its periods, counting calls made while down', () => {
    const d = new Dependency({ down: [{ fromMs: 100, untilMs: 200 }] });
    expect(d.call(99)).toBe(ANSWER_OK);
    expect(d.call(100)).toBe(ANSWER_REFUSED);
    expect(d.call(199.9)).toBe(ANSWER_REFUSED);
    expect(d.call(200)).toBe(ANSWER_OK);
    expect(d.calls).toBe(4);
    expect(d.callsWhileDown).toBe(2);
  });

  it('hangs while down when told to; the caller learns at its timeout', () => {
    const d = new Dependency({ whenDown: 'hang', down: [{ fromMs: 0, untilMs: Number.POSITIVE_INFINITY }] });
    const a = d.call(5);
    expect(a).toBe(ANSWER_HANG);
    expect(d.seenAs(a, 1000)).toBe(ANSWER_HANG);
    expect(d.answerDelay(a, 1000)).toBe(1000);
  });

  it('validates its options, listing every problem', () => {
    expect(() => new Dependency({ latencyMs: -1, whenDown: 'explode' as 'hang', down: [{ fromMs: 5, untilMs: 1 }] })).toThrow(
      /latencyMs[\s\S]*whenDown[\s\S]*down\[0\]/,
    );
    expect(() => new Dependency({ down: [{ fromMs: 0, untilMs: Number.POSITIVE_INFINITY }] })).not.toThrow();
  });

  it('an answer slower than the attempt timeout is a timeout to the caller', () => {
    const d = new Dependency({ latencyMs: 50, refuseMs: 2 });
    expect(d.seenAs(ANSWER_OK, 100)).toBe(ANSWER_OK);
    expect(d.answerDelay(ANSWER_OK, 100)).toBe(50);
    expect(d.seenAs(ANSWER_OK, 20)).toBe(ANSWER_HANG);
    expect(d.answerDelay(ANSWER_OK, 20)).toBe(20);
    expect(d.answerDelay(ANSWER_REFUSED, 100)).toBe(2);
  });
});
