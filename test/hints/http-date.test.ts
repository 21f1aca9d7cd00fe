import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseHttpDate } from '../../src/hints/http-date.js';

/** 2026-01-15T12:00:00Z, a fixed "now" for every case that needs one. */
const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);
const RFC_EXAMPLE = Date.UTC(1994, 10, 6, 8, 49, 37);

const SHORT_DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const LONG_DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const time = (d: Date) => `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;

const imf = (d: Date) =>
  `${SHORT_DAYS[d.getUTCDay()]}, ${pad(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]} ${pad(d.getUTCFullYear(), 4)} ${time(d)} GMT`;
const rfc850 = (d: Date) =>
  `${LONG_DAYS[d.getUTCDay()]}, ${pad(d.getUTCDate())}-${MONTHS[d.getUTCMonth()]}-${pad(d.getUTCFullYear() % 100)} ${time(d)} GMT`;
const asctime = (d: Date) =>
  `${SHORT_DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${time(d)} ${pad(d.getUTCFullYear(), 4)}`;

describe('parseHttpDate', () => {
  it('reads the three RFC 9110 examples as the same instant', () => {
    expect(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT', NOW)).toBe(RFC_EXAMPLE);
    expect(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', NOW)).toBe(RFC_EXAMPLE);
    expect(parseHttpDate('Sun Nov  6 08:49:37 1994', NOW)).toBe(RFC_EXAMPLE);
  });

  it('accepts a two-digit asctime day and ignores surrounding OWS', () => {
    expect(parseHttpDate('Thu Nov 16 08:49:37 1994', NOW)).toBe(Date.UTC(1994, 10, 16, 8, 49, 37));
    expect(parseHttpDate(' \tSun, 06 Nov 1994 08:49:37 GMT\t ', NOW)).toBe(RFC_EXAMPLE);
  });

  it('round-trips every instant ≥ 1970 in IMF-fixdate and asctime', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Date.UTC(9999, 11, 31, 23, 59, 59) / 1000 }), (seconds) => {
        const d = new Date(seconds * 1000);
        expect(parseHttpDate(imf(d), NOW)).toBe(seconds * 1000);
        expect(parseHttpDate(asctime(d), NOW)).toBe(seconds * 1000);
        expect(imf(d)).toBe(d.toUTCString()); // our generator is the real IMF-fixdate
      }),
    );
  });

  it('round-trips RFC 850 for any instant within 50 years of now (either side)', () => {
    const fiftyYears = Date.UTC(2076, 0, 15, 12) - NOW;
    fc.assert(
      fc.property(fc.integer({ min: (NOW - fiftyYears) / 1000 + 86_400, max: (NOW + fiftyYears) / 1000 }), (seconds) => {
        expect(parseHttpDate(rfc850(new Date(seconds * 1000)), NOW)).toBe(seconds * 1000);
      }),
    );
  });

  it('reads an RFC 850 year more than 50 years ahead as the most recent such year in the past', () => {
    // now = 2026-01-15 12:00: the limit is 2076-01-15 12:00.
    expect(parseHttpDate('Wednesday, 15-Jan-76 12:00:00 GMT', NOW)).toBe(Date.UTC(2076, 0, 15, 12));
    expect(parseHttpDate('Thursday, 15-Jan-76 12:00:01 GMT', NOW)).toBe(Date.UTC(1976, 0, 15, 12, 0, 1));
    expect(parseHttpDate('Sunday, 01-Feb-76 00:00:00 GMT', NOW)).toBe(Date.UTC(1976, 1, 1));
    expect(parseHttpDate('Friday, 01-Jan-99 00:00:00 GMT', NOW)).toBe(Date.UTC(1999, 0, 1));
    expect(parseHttpDate('Saturday, 01-Jan-00 00:00:00 GMT', NOW)).toBe(Date.UTC(2000, 0, 1));
    expect(parseHttpDate('Thursday, 01-Jan-26 00:00:00 GMT', NOW)).toBe(Date.UTC(2026, 0, 1));
    // Late in a century the next one is reachable: in 2090, "10" is 2110, not 2010.
    expect(parseHttpDate('Monday, 01-Jan-10 00:00:00 GMT', Date.UTC(2090, 5, 1))).toBe(Date.UTC(2110, 0, 1));
  });

  it('places every two-digit year within (now − 50 y, now + 50 y]', () => {
    fc.assert(
      fc.property(
        // From 2020 on, now − 50 y is never before 1970, which parseHttpDate rejects.
        fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2200, 0, 1) }),
        fc.integer({ min: 0, max: 99 }),
        (now, yy) => {
          const parsed = parseHttpDate(`Monday, 01-Jan-${pad(yy)} 00:00:00 GMT`, now);
          expect(parsed).toBeDefined();
          const year = new Date(parsed as number).getUTCFullYear();
          const nowYear = new Date(now).getUTCFullYear();
          expect(year % 100).toBe(yy);
          expect(year).toBeLessThanOrEqual(nowYear + 50);
          expect(year).toBeGreaterThan(nowYear - 51);
        },
      ),
    );
  });

  it('validates day, month and time ranges', () => {
    const bad = [
      'Sun, 00 Nov 1994 08:49:37 GMT',
      'Sun, 32 Jan 1994 08:49:37 GMT',
      'Sun, 31 Apr 1994 08:49:37 GMT',
      'Sun, 30 Feb 2000 08:49:37 GMT',
      'Sun, 29 Feb 1900 08:49:37 GMT',
      'Sun, 29 Feb 1994 08:49:37 GMT',
      'Sun, 06 Nov 1994 24:00:00 GMT',
      'Sun, 06 Nov 1994 08:60:00 GMT',
      'Sun, 06 Nov 1994 08:49:61 GMT',
      'Sun, 06 Foo 1994 08:49:37 GMT',
      'Sunday, 31-Jun-94 08:49:37 GMT',
      'Sun Feb 30 08:49:37 1994',
      'Sun Nov  0 08:49:37 1994',
    ];
    for (const value of bad) expect(parseHttpDate(value, NOW), value).toBeUndefined();
    expect(parseHttpDate('Tue, 29 Feb 2000 00:00:00 GMT', NOW)).toBe(Date.UTC(2000, 1, 29));
    // A leap second is the instant just before the next minute starts.
    expect(parseHttpDate('Sat, 31 Dec 2016 23:59:60 GMT', NOW)).toBe(Date.UTC(2017, 0, 1));
  });

  it('is strict about shape, case and zone (no Date.parse leniency)', () => {
    const bad = [
      '',
      'Sun, 6 Nov 1994 08:49:37 GMT',
      'Sun, 06 Nov 94 08:49:37 GMT',
      'sun, 06 Nov 1994 08:49:37 GMT',
      'Sun, 06 nov 1994 08:49:37 GMT',
      'Sun, 06 Nov 1994 08:49:37 gmt',
      'Sun, 06 Nov 1994 08:49:37 UTC',
      'Sun, 06 Nov 1994 08:49:37 +0000',
      'Sun,  06 Nov 1994 08:49:37 GMT',
      'Sun, 06 Nov 1994 8:49:37 GMT',
      'Sunday, 06 Nov 1994 08:49:37 GMT',
      'Sun, 06-Nov-94 08:49:37 GMT',
      'Sunday, 06-Nov-1994 08:49:37 GMT',
      'Sun Nov 6 08:49:37 1994',
      'Sun Nov  6 08:49:37 94',
      'Sun Nov 06 08:49:37 1994 GMT',
      '1994-11-06T08:49:37Z',
      '784111777',
      'Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:37 GMT',
      'Xyz, 06 Nov 1994 08:49:37 GMT',
      'Sun, 06 Nov 1994 08:49:37 GMTX',
      'Sun, 06 Nov 1994 08:49:37 GMT\n',
    ];
    for (const value of bad) expect(parseHttpDate(value, NOW), JSON.stringify(value)).toBeUndefined();
    // Date.parse would accept most of these; we do not.
    expect(Number.isNaN(Date.parse('Sun, 6 Nov 1994 08:49:37 GMT'))).toBe(false);
  });

  it('does not check the day name against the date (the instant is unambiguous)', () => {
    expect(parseHttpDate('Mon, 06 Nov 1994 08:49:37 GMT', NOW)).toBe(RFC_EXAMPLE);
  });

  it('rejects dates before 1970 and RFC 850 dates when now is unusable', () => {
    expect(parseHttpDate('Wed, 31 Dec 1969 23:59:59 GMT', NOW)).toBeUndefined();
    expect(parseHttpDate('Thu, 01 Jan 1970 00:00:00 GMT', NOW)).toBe(0);
    // In 2000, "51" is 1951 (2051 is more than 50 years ahead): before 1970, so rejected.
    expect(parseHttpDate('Monday, 01-Jan-51 00:00:00 GMT', Date.UTC(2000, 0, 1))).toBeUndefined();
    expect(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', Number.NaN)).toBeUndefined();
    expect(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', Number.POSITIVE_INFINITY)).toBeUndefined();
    expect(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', 8.64e15 + 1)).toBeUndefined();
    // IMF-fixdate and asctime do not need now.
    expect(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT', Number.NaN)).toBe(RFC_EXAMPLE);
  });
});
