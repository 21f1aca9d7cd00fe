import { describe, expect, it } from 'vitest';
import {
  type BodyHintExtractor,
  DEFAULT_BODY_HINT_EXTRACTORS,
  extractBodyHint,
  googleRetryInfoHint,
  jsonFieldHint,
  MAX_BODY_HINT_CHARS,
  messageHint,
} from '../../src/hints/body-hints.js';
import { MAX_HINT_MS } from '../../src/hints/hint-ms.js';

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);

describe('jsonFieldHint', () => {
  it('reads seconds fields and ms fields, top level and under error', () => {
    expect(extractBodyHint({ retry_after: 30 }, NOW)).toBe(30_000);
    expect(extractBodyHint({ retryAfter: 2 }, NOW)).toBe(2_000);
    expect(extractBodyHint({ retry_after_ms: 1500 }, NOW)).toBe(1_500);
    expect(extractBodyHint({ retryAfterMs: 20 }, NOW)).toBe(20);
    expect(extractBodyHint({ error: { retry_after: 30 } }, NOW)).toBe(30_000);
    expect(extractBodyHint({ error: { retryAfterMs: 700 } }, NOW)).toBe(700);
  });

  it('parses JSON text, fractions (Discord) and numeric strings', () => {
    expect(extractBodyHint('{ "error": { "retry_after": 30 } }', NOW)).toBe(30_000);
    expect(extractBodyHint('  {"retry_after": 64.57, "global": false}', NOW)).toBe(64_570);
    expect(extractBodyHint({ retry_after: '12' }, NOW)).toBe(12_000);
  });

  it('prefers ms fields, then top level over error', () => {
    expect(jsonFieldHint({ retry_after: 9, retry_after_ms: 10 }, NOW)).toBe(10);
    expect(jsonFieldHint({ retry_after: 1, error: { retry_after: 9 } }, NOW)).toBe(1_000);
  });

  it('ignores negative, non-numeric and deeper fields', () => {
    expect(extractBodyHint({ retry_after: -5 }, NOW)).toBeUndefined();
    expect(extractBodyHint({ retry_after: 'soon' }, NOW)).toBeUndefined();
    expect(extractBodyHint({ a: { b: { retry_after: 5 } } }, NOW)).toBeUndefined();
    expect(extractBodyHint({ retry_after: '-5' }, NOW)).toBeUndefined();
  });
});

describe('googleRetryInfoHint', () => {
  const retryInfo = (retryDelay: unknown) => ({
    error: {
      code: 429,
      details: [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'RATE_LIMIT_EXCEEDED' },
        { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay },
      ],
    },
  });

  it('reads retryDelay in JSON and object form', () => {
    expect(extractBodyHint(retryInfo('30s'), NOW)).toBe(30_000);
    expect(extractBodyHint(retryInfo('1.5s'), NOW)).toBe(1_500);
    expect(extractBodyHint(retryInfo({ seconds: 2, nanos: 500_000_000 }), NOW)).toBe(2_500);
    expect(googleRetryInfoHint({ details: [{ '@type': 'google.rpc.RetryInfo', retryDelay: '4s' }] }, NOW)).toBe(4_000);
  });

  it('ignores malformed delays', () => {
    expect(extractBodyHint(retryInfo('30'), NOW)).toBeUndefined();
    expect(extractBodyHint(retryInfo('-3s'), NOW)).toBeUndefined();
  });

  it('an object form with a part that is not a usable number, or with neither part, is no delay (never 0 ms)', () => {
    for (const malformed of [{ seconds: -30 }, { seconds: 'junk' }, { nanos: -5 }, { seconds: 2, nanos: 'x' }, {}, [], [30]]) {
      expect(extractBodyHint(retryInfo(malformed), NOW)).toBeUndefined();
    }
    // An absent part is 0; seconds may come as a string (int64 in JSON).
    expect(extractBodyHint(retryInfo({ nanos: 250_000_000 }), NOW)).toBe(250);
    expect(extractBodyHint(retryInfo({ seconds: '3' }), NOW)).toBe(3_000);
  });

  it('a malformed retryDelay leaves the message’s own hint in place', () => {
    const body = {
      error: {
        message: 'please retry in 30 seconds',
        details: [{ '@type': 'google.rpc.RetryInfo', retryDelay: { seconds: -30 } }],
      },
    };
    expect(extractBodyHint(body, NOW)).toBe(30_000);
  });
});

describe('messageHint', () => {
  it.each([
    ['You are blocked for 30 seconds', 30_000],
    ['Too many requests, try again in 2 minutes.', 120_000],
    ['retry after 500ms', 500],
    ['Please wait 10 s before retrying', 10_000],
    ['Rate limit reached for gpt-4. Please try again in 1.5s. Visit …', 1_500],
    ['Please try again in 1m30s', 90_000],
    ['Retry in 1h2m3.5s', 3_723_500],
    ['TRY AGAIN IN 3 HOURS', 10_800_000],
    ['come back in 1 day', 86_400_000],
    ['limit exceeded; retry 3 times, then wait 2 min', 120_000],
  ])('%s ⇒ %i ms', (text, ms) => {
    expect(extractBodyHint(text, NOW)).toBe(ms);
  });

  it.each([
    'retry after 30',
    'retry 3 times',
    'please try again later',
    'wait for it',
    'blocked forever',
    'retry after 5 parsecs',
    'rewait 5 seconds',
  ])('%s ⇒ nothing', (text) => {
    expect(extractBodyHint(text, NOW)).toBeUndefined();
  });

  it('reads message-like fields of object bodies', () => {
    expect(messageHint({ message: 'try again in 5 seconds' }, NOW)).toBe(5_000);
    expect(messageHint({ error: 'blocked for 7 seconds' }, NOW)).toBe(7_000);
    expect(messageHint({ error: { message: 'retry after 8s' } }, NOW)).toBe(8_000);
    expect(messageHint({ detail: 'Request was throttled. Expected available in 9 seconds. Try again in 9 seconds.' }, NOW)).toBe(
      9_000,
    );
    expect(extractBodyHint('{"message": "wait 3 seconds"}', NOW)).toBe(3_000);
  });
});

describe('extractBodyHint', () => {
  it('tries extractors in order and sanitises their results', () => {
    const seen: string[] = [];
    const make =
      (name: string, result: unknown): BodyHintExtractor =>
      () => {
        seen.push(name);
        return result as number;
      };
    const thrower: BodyHintExtractor = () => {
      seen.push('thrower');
      throw new Error('bad extractor');
    };
    const ms = extractBodyHint({}, NOW, [
      make('nan', Number.NaN),
      make('negative', -1),
      make('minus-infinite', Number.NEGATIVE_INFINITY),
      make('string', '5'),
      thrower,
      make('good', 12.2),
      make('never', 99),
    ]);
    expect(ms).toBe(13);
    expect(seen).toEqual(['nan', 'negative', 'minus-infinite', 'string', 'thrower', 'good']);
  });

  it('regression: a value that overflows (JSON 1e308 seconds, Infinity) is capped like a huge header, not dropped', () => {
    expect(extractBodyHint('{"retry_after":1e308}', NOW)).toBe(MAX_HINT_MS);
    expect(extractBodyHint('{"retry_after_ms":1e400}', NOW)).toBe(MAX_HINT_MS);
    expect(extractBodyHint({ retry_after: Number.POSITIVE_INFINITY }, NOW)).toBe(MAX_HINT_MS);
  });

  it('caps huge results at MAX_HINT_MS', () => {
    expect(extractBodyHint({ retry_after: 1e300 }, NOW)).toBe(MAX_HINT_MS);
  });

  it('passes nowMs to extractors and a custom extractor can be added before the defaults', () => {
    const cooldown: BodyHintExtractor = (body, nowMs) => {
      const until = (body as { until?: unknown } | null)?.until;
      return typeof until === 'number' ? until - nowMs : undefined;
    };
    expect(extractBodyHint({ until: NOW + 400 }, NOW, [cooldown, ...DEFAULT_BODY_HINT_EXTRACTORS])).toBe(400);
    expect(extractBodyHint({ until: NOW - 400 }, NOW, [cooldown])).toBeUndefined();
  });

  it('decodes bytes', () => {
    const bytes = new TextEncoder().encode('{"retry_after": 3}');
    expect(extractBodyHint(bytes, NOW)).toBe(3_000);
    expect(extractBodyHint(bytes.buffer, NOW)).toBe(3_000);
  });

  it('does not parse JSON beyond 64 KiB, and scans only the first 64 KiB of text', () => {
    expect(MAX_BODY_HINT_CHARS).toBe(64 * 1024);
    const big = JSON.stringify({ retry_after: 5, pad: 'x'.repeat(MAX_BODY_HINT_CHARS) });
    expect(extractBodyHint(big, NOW)).toBeUndefined();
    expect(extractBodyHint(`${'x '.repeat(MAX_BODY_HINT_CHARS)} try again in 5 seconds`, NOW)).toBeUndefined();
    expect(extractBodyHint(`try again in 5 seconds ${'x'.repeat(2 * MAX_BODY_HINT_CHARS)}`, NOW)).toBe(5_000);
  });

  it('never throws on hostile bodies', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('get');
        },
        getPrototypeOf() {
          throw new Error('proto');
        },
      },
    );
    const getter = {
      get retry_after(): number {
        throw new Error('getter');
      },
      message: 'try again in 2 seconds',
    };
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(extractBodyHint(hostile, NOW)).toBeUndefined();
    expect(extractBodyHint(getter, NOW)).toBe(2_000);
    expect(extractBodyHint(proxy, NOW)).toBeUndefined();
    expect(extractBodyHint({ error: { details: proxy } }, NOW)).toBeUndefined();
    expect(extractBodyHint(Object.create(null), NOW)).toBeUndefined();
    expect(extractBodyHint('{"retry_after": 3', NOW)).toBeUndefined();
    expect(extractBodyHint(null, NOW)).toBeUndefined();
    expect(extractBodyHint(42, NOW)).toBeUndefined();
    expect(extractBodyHint({ retry_after: 1 }, NOW, 'nope' as never)).toBe(1_000);
  });
});
