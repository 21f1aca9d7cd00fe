import { afterEach, describe, expect, it } from 'vitest';
import { withoutStack } from '../../src/errors/without-stack.js';

const original = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit') as PropertyDescriptor;
afterEach(() => {
  Object.defineProperty(Error, 'stackTraceLimit', original);
});

describe('withoutStack', () => {
  it('makes the error with its first line for a stack, and restores the limit', () => {
    const before = Error.stackTraceLimit;
    const error = withoutStack(() => new RangeError('too far'));
    expect(error.stack).toBe('RangeError: too far');
    expect(Error.stackTraceLimit).toBe(before);
    expect(new Error('later').stack?.split('\n').length).toBeGreaterThan(1);
  });

  it('restores the limit when making the error throws', () => {
    const before = Error.stackTraceLimit;
    expect(() =>
      withoutStack(() => {
        throw new TypeError('bad details');
      }),
    ).toThrow('bad details');
    expect(Error.stackTraceLimit).toBe(before);
  });

  it('with the limit frozen (lockdown), makes the error as usual instead of throwing', () => {
    Object.defineProperty(Error, 'stackTraceLimit', { ...original, writable: false });
    const error = withoutStack(() => new Error('as usual'));
    expect(error.message).toBe('as usual');
    expect(error.stack?.split('\n').length).toBeGreaterThan(1);
  });

  it('without a numeric limit (another engine), leaves it alone', () => {
    Object.defineProperty(Error, 'stackTraceLimit', { ...original, value: undefined });
    const error = withoutStack(() => new Error('left alone'));
    expect(error.message).toBe('left alone');
    expect(Error.stackTraceLimit).toBeUndefined();
  });
});
