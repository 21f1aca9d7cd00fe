import { describe, expect, it } from 'vitest';
import { GiveUpError } from '../../src/errors/errors.js';

describe('GiveUpError.message', () => {
  it('says how long the callee asked to wait when the hint was too long', () => {
    const error = new GiveUpError('hint-too-long', {
      outcome: 'failed',
      attempts: 1,
      retryAfterMs: 120_000,
      downstream: 'payments',
    });
    expect(error.message).toBe(
      'payments: gave up after 1 attempt(s) in 0 ms (hint-too-long: the callee asked to wait 120000 ms)',
    );
  });

  it('other reasons carry no wait text, even with a retryAfterMs', () => {
    const error = new GiveUpError('circuit-open', { outcome: 'failed', attempts: 2, retryAfterMs: 5_000 });
    expect(error.message).toBe('gave up after 2 attempt(s) in 0 ms (circuit-open)');
  });
});
