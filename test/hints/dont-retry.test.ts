import { describe, expect, it } from 'vitest';
import { ENVOY_OVERLOADED_HEADER, RETRY_EXHAUSTED_HEADER, readDontRetry } from '../../src/hints/dont-retry.js';

describe('readDontRetry', () => {
  it('pins the header names', () => {
    expect(RETRY_EXHAUSTED_HEADER).toBe('x-retry-exhausted');
    expect(ENVOY_OVERLOADED_HEADER).toBe('x-envoy-overloaded');
  });

  it('x-retry-exhausted: 1 (or true) stops retrying; 0 and other values do not', () => {
    expect(readDontRetry({ 'x-retry-exhausted': '1' })).toBe(true);
    expect(readDontRetry(new Headers({ 'X-Retry-Exhausted': ' 1 ' }))).toBe(true);
    expect(readDontRetry({ 'X-Retry-Exhausted': 'TRUE' })).toBe(true);
    expect(readDontRetry({ 'x-retry-exhausted': 1 })).toBe(true);
    for (const value of ['0', '', 'false', 'yes', '2', '0, 0', '11', ',']) {
      expect(readDontRetry({ 'x-retry-exhausted': value }), value).toBe(false);
    }
  });

  it('the marker set twice (two layers, or a proxy and a layer) arrives as a list and still stops retrying', () => {
    expect(readDontRetry({ 'x-retry-exhausted': '1, 1' })).toBe(true);
    expect(readDontRetry({ 'x-retry-exhausted': ['1', '1'] })).toBe(true);
    expect(readDontRetry({ 'x-retry-exhausted': '0,true' })).toBe(true);
    const twice = new Headers();
    twice.append('x-retry-exhausted', '1');
    twice.append('x-retry-exhausted', '1');
    expect(readDontRetry(twice)).toBe(true);
  });

  it('x-envoy-overloaded stops retrying whatever its value, even empty', () => {
    expect(readDontRetry({ 'x-envoy-overloaded': 'true' })).toBe(true);
    expect(readDontRetry({ 'x-envoy-overloaded': '' })).toBe(true);
  });

  it('a negative grpc-retry-pushback-ms stops retrying; others do not', () => {
    expect(readDontRetry({ 'grpc-retry-pushback-ms': '-1' })).toBe(true);
    expect(readDontRetry({ 'grpc-retry-pushback-ms': '100' })).toBe(false);
    expect(readDontRetry({ 'grpc-retry-pushback-ms': 'garbage' })).toBe(false);
  });

  it('no markers, no headers: false', () => {
    expect(readDontRetry({ 'retry-after': '5' })).toBe(false);
    expect(readDontRetry(undefined)).toBe(false);
    expect(readDontRetry(null)).toBe(false);
  });
});
