import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { classifyGrpcStatus, GRPC_STATUS, grpcCodeName } from '../../src/grpc/status.js';

const none = new Metadata();

describe('classifyGrpcStatus', () => {
  it.each([
    ['UNAVAILABLE', 'failed', true],
    ['RESOURCE_EXHAUSTED', 'failed', true],
    ['ABORTED', 'failed', true],
    ['DEADLINE_EXCEEDED', 'unknown', true],
    ['UNKNOWN', 'unknown', true],
    ['INTERNAL', 'unknown', true],
    ['CANCELLED', 'unknown', false],
    ['DATA_LOSS', 'unknown', false],
    ['INVALID_ARGUMENT', 'failed', false],
    ['NOT_FOUND', 'failed', false],
    ['ALREADY_EXISTS', 'failed', false],
    ['PERMISSION_DENIED', 'failed', false],
    ['FAILED_PRECONDITION', 'failed', false],
    ['OUT_OF_RANGE', 'failed', false],
    ['UNIMPLEMENTED', 'failed', false],
    ['UNAUTHENTICATED', 'failed', false],
  ] as const)('%s ⇒ %s, retryable %s', (name, outcome, retryable) => {
    const c = classifyGrpcStatus(GRPC_STATUS[name], none, 0);
    expect(c).toMatchObject({ outcome, retryable, code: name });
  });

  it('flags DEADLINE_EXCEEDED as a timeout and RESOURCE_EXHAUSTED as throttling', () => {
    expect(classifyGrpcStatus(GRPC_STATUS.DEADLINE_EXCEEDED, none, 0)?.timeout).toBe(true);
    expect(classifyGrpcStatus(GRPC_STATUS.RESOURCE_EXHAUSTED, none, 0)?.throttled).toBe(true);
    expect(classifyGrpcStatus(GRPC_STATUS.UNAVAILABLE, none, 0)?.throttled).toBeUndefined();
  });

  it('OK and values outside 1–16 are not failures', () => {
    for (const code of [0, -1, 17, 1.5, Number.NaN]) expect(classifyGrpcStatus(code, none, 0)).toBeUndefined();
  });

  it('reads grpc-retry-pushback-ms from the trailers: a wait (and a pacing signal), or when negative a stop', () => {
    const wait = new Metadata();
    wait.set('grpc-retry-pushback-ms', '250');
    expect(classifyGrpcStatus(GRPC_STATUS.UNAVAILABLE, wait, 0)).toMatchObject({
      hintMs: 250,
      hintSource: 'grpc-retry-pushback-ms',
      throttled: true,
    });
    const stop = new Metadata();
    stop.set('grpc-retry-pushback-ms', '-1');
    const c = classifyGrpcStatus(GRPC_STATUS.UNAVAILABLE, stop, 0);
    expect(c?.dontRetry).toBe(true);
    expect(c?.hintMs).toBeUndefined();
  });

  it('reads the x-retry-exhausted marker', () => {
    const marked = new Metadata();
    marked.set('x-retry-exhausted', '1');
    expect(classifyGrpcStatus(GRPC_STATUS.UNAVAILABLE, marked, 0)?.dontRetry).toBe(true);
  });

  it('retryableCodes replaces the retryable set', () => {
    expect(classifyGrpcStatus(GRPC_STATUS.INTERNAL, none, 0, { retryableCodes: [14] })?.retryable).toBe(false);
    expect(classifyGrpcStatus(GRPC_STATUS.NOT_FOUND, none, 0, { retryableCodes: [5] })?.retryable).toBe(true);
  });

  it('garbage trailers never throw', () => {
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error('boom');
        },
      },
    );
    expect(classifyGrpcStatus(GRPC_STATUS.UNAVAILABLE, hostile as never, 0)).toMatchObject({ outcome: 'failed' });
  });

  it('names codes', () => {
    expect(grpcCodeName(14)).toBe('UNAVAILABLE');
    expect(grpcCodeName(99)).toBe('CODE_99');
  });
});
