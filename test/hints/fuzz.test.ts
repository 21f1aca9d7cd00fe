import fc from 'fast-check';
import { describe, it } from 'vitest';
import { extractBodyHint } from '../../src/hints/body-hints.js';
import { readDontRetry } from '../../src/hints/dont-retry.js';
import { MAX_HINT_MS } from '../../src/hints/hint-ms.js';
import { parseHttpDate } from '../../src/hints/http-date.js';
import {
  isGrpcPushbackStop,
  isRateLimitExhausted,
  readGrpcRetryPushback,
  readRateLimit,
  readRateLimitRemaining,
  readRateLimitReset,
  readXRateLimitReset,
} from '../../src/hints/rate-limit-fields.js';
import { parseRetryAfter } from '../../src/hints/retry-after.js';
import { readWaitHint } from '../../src/hints/wait-hint.js';

/**
 * untrusted input never throws and never yields NaN, negative or infinite waits.
 * Every hint parser sees every generated value; 100,000 values per run.
 */
const HEADER_NAMES = [
  'retry-after',
  'ratelimit',
  'ratelimit-policy',
  'ratelimit-reset',
  'ratelimit-remaining',
  'x-ratelimit-reset',
  'x-ratelimit-remaining',
  'grpc-retry-pushback-ms',
  'x-retry-exhausted',
  'x-envoy-overloaded',
];

/** Pieces that real and broken header values are made of, so the structured generator hits the parsers' deep paths. */
const PIECES = [
  ...'0123456789',
  ...' \t,;=-.:"()?*@%/\\+',
  'r',
  't',
  'w',
  'q',
  'remaining',
  'reset',
  'limit',
  '"default"',
  'default',
  'GMT',
  'Sun',
  'Sunday',
  'Nov',
  'Feb',
  '1994',
  '94',
  '2026',
  '08:49:37',
  '23:59:60',
  ', ',
  '-',
  '9999999999999999999',
  '1700000000',
  '1700000000000',
  'try again in ',
  'blocked for ',
  'retry after ',
  ' seconds',
  'ms',
  'm',
  's',
  '{"retry_after":',
  '{"error":{"retry_after_ms":',
  '"retryDelay":"',
  '}',
  'e',
  'Infinity',
  'NaN',
  '\u00a0',
  '\n',
];

const structured = fc.array(fc.constantFrom(...PIECES), { maxLength: 24 }).map((parts) => parts.join(''));
const dates = fc
  .tuple(fc.integer({ min: -1e11, max: 4e11 }), fc.constantFrom('imf', 'rfc850', 'asctime', 'mangled'), fc.nat(40))
  .map(([seconds, format, cut]) => {
    const text = new Date(seconds * 1000).toUTCString();
    if (format === 'imf') return text;
    if (format === 'rfc850') return text.replace(/^(\w+), (\d+) (\w+) \d\d(\d\d)/, '$1day, $2-$3-$4');
    if (format === 'asctime') return text.replace(/^(\w+), (\d+) (\w+) (\d+) (\S+) GMT$/, '$1 $3 $2 $5 $4');
    return text.slice(0, cut) + text.slice(cut + 1);
  });
const values = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), structured, dates, fc.nat().map(String));

/**
 * A plain check rather than `expect`: with ~30 checks per value, vitest's matchers would
 * dominate the run time. fast-check reports the value (and seed) that failed.
 */
function expectWait(ms: unknown, what: string) {
  if (ms === undefined) return;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || ms > MAX_HINT_MS) {
    throw new Error(`${what} returned ${String(ms)}`);
  }
}

function expectBoolean(value: unknown, what: string) {
  if (typeof value !== 'boolean') throw new Error(`${what} returned ${String(value)}`);
}

describe('fuzz: every hint parser on 100,000 hostile values', () => {
  it('never throws; every result is undefined or a finite number ≥ 0', () => {
    fc.assert(
      fc.property(values, fc.integer({ min: 0, max: 4e12 }), (value, now) => {
        expectWait(parseRetryAfter(value, now), 'parseRetryAfter');
        expectWait(parseHttpDate(value, now), 'parseHttpDate');
        expectWait(readRateLimit(value), 'readRateLimit');
        expectWait(readRateLimit('"d";r=0', value), 'readRateLimit(policy)');
        expectWait(readRateLimit(value, value), 'readRateLimit(value, value)');
        expectWait(readRateLimitReset(value, now), 'readRateLimitReset');
        expectWait(readXRateLimitReset(value, now), 'readXRateLimitReset');
        expectWait(readRateLimitRemaining(value), 'readRateLimitRemaining');
        expectWait(readGrpcRetryPushback(value), 'readGrpcRetryPushback');
        expectBoolean(isGrpcPushbackStop(value), 'isGrpcPushbackStop');
        expectBoolean(isRateLimitExhausted(value), 'isRateLimitExhausted');
        expectWait(extractBodyHint(value, now), 'extractBodyHint(text)');
        expectWait(
          extractBodyHint({ message: value, retry_after: value, error: { retry_after_ms: value } }, now),
          'extractBodyHint(object)',
        );

        const all: Record<string, string> = {};
        for (const name of HEADER_NAMES) {
          all[name] = value;
          expectWait(readWaitHint({ [name]: value }, now, { throttled: true })?.ms, `readWaitHint(${name})`);
          expectBoolean(readDontRetry({ [name]: value }), `readDontRetry(${name})`);
        }
        expectWait(readWaitHint(all, now)?.ms, 'readWaitHint(all)');
        expectBoolean(readDontRetry(all), 'readDontRetry(all)');
      }),
      { numRuns: 100_000 },
    );
  });
});
