import { describe, expect, it } from 'vitest';
import { IDEMPOTENT_METHODS, isIdempotentMethod } from '../../src/classify/methods.js';

describe('isIdempotentMethod', () => {
  it('pins the idempotent methods', () => {
    expect(IDEMPOTENT_METHODS).toEqual(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);
  });

  it.each([
    ['GET', true],
    ['get', true],
    ['Head', true],
    ['OPTIONS', true],
    ['put', true],
    ['DELETE', true],
    ['TRACE', true],
    ['POST', false],
    ['post', false],
    ['PATCH', false],
    ['CONNECT', false],
    ['', false],
    [' GET', false],
  ])('%s ⇒ %s', (method, idempotent) => {
    expect(isIdempotentMethod(method)).toBe(idempotent);
  });

  it('undefined is GET; a non-string is not idempotent', () => {
    expect(isIdempotentMethod(undefined)).toBe(true);
    expect(isIdempotentMethod(42 as unknown as string)).toBe(false);
    expect(isIdempotentMethod(null as unknown as string)).toBe(false);
  });
});
