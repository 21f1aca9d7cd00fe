import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ATTEMPT_HEADER, readPreviousAttempts } from '../../src/http/index.js';

describe('attempt headers', () => {
  it('x-retry-attempt counts previous attempts; gRPC and Envoy forms are read compatibly', () => {
    expect(ATTEMPT_HEADER).toBe('x-retry-attempt');
    expect(readPreviousAttempts({ 'x-retry-attempt': '0' })).toBe(0);
    expect(readPreviousAttempts({ 'x-retry-attempt': '2' })).toBe(2);
    expect(readPreviousAttempts({ 'grpc-previous-rpc-attempts': '3' })).toBe(3);
    // Envoy counts this attempt too.
    expect(readPreviousAttempts({ 'x-envoy-attempt-count': '1' })).toBe(0);
    expect(readPreviousAttempts({ 'x-envoy-attempt-count': '4' })).toBe(3);
    expect(readPreviousAttempts({ 'x-retry-attempt': '1', 'x-envoy-attempt-count': '9' })).toBe(1);
    expect(readPreviousAttempts({ 'x-retry-attempt': 'two', 'grpc-previous-rpc-attempts': '2' })).toBe(2);
    expect(readPreviousAttempts({})).toBe(0);
  });

  it('property: any header value gives an integer in [0, 1,000,000], never throwing', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), (a, b, c) => {
        const n = readPreviousAttempts({ 'x-retry-attempt': a, 'grpc-previous-rpc-attempts': b, 'x-envoy-attempt-count': c });
        expect(Number.isInteger(n) && n >= 0 && n <= 1_000_000).toBe(true);
      }),
    );
  });
});
