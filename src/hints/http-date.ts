import { trimOws } from './hint-ms.js';

/**
 * Parses an HTTP-date (RFC 9110 §5.6.7) into epoch milliseconds, accepting exactly the
 * three formats a recipient must accept, and nothing else:
 *
 * - IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`
 * - obsolete RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`
 * - ANSI C asctime(): `Sun Nov  6 08:49:37 1994`
 *
 * Parsing is by position and case-sensitive (HTTP-date is case-sensitive), never through
 * `Date.parse`, whose leniency differs between engines and accepts things no server meant.
 * Day, month, hour (00–23), minute (00–59) and second (00–60, a leap second) are range-checked,
 * and the day must exist in its month (no 30 Feb; 29 Feb only in leap years). The day name
 * must be a real day name but is not checked against the date: a wrong weekday leaves no
 * doubt about which instant was meant, and rejecting it would only lose the hint.
 *
 * RFC 850's two-digit year is read as RFC 9110 requires: a date that would be more than
 * 50 years after `nowMs` is taken as the most recent matching year in the past, i.e. the year
 * is the latest `…yy` whose instant is ≤ now + 50 years.
 *
 * Dates before 1970-01-01 are rejected (`undefined`): they predate HTTP, and every result of
 * a hint parser is a non-negative number. Surrounding OWS (spaces, tabs) is ignored.
 *
 * @param nowMs the current time (epoch ms); needed only to place RFC 850's two-digit year.
 * @returns epoch ms, or `undefined` when the value is not a valid HTTP-date.
 */
export function parseHttpDate(value: string, nowMs: number): number | undefined {
  if (typeof value !== 'string') return undefined;
  const text = trimOws(value);
  // The three formats are told apart by what follows the day name.
  const comma = text.indexOf(',');
  if (comma === 3) return parseImfFixdate(text);
  if (comma > 3) return parseRfc850(text, comma, nowMs);
  if (comma === -1) return parseAsctime(text);
  return undefined;
}

const SHORT_DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const LONG_DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `Sun, 06 Nov 1994 08:49:37 GMT`: fixed width, 29 characters. */
function parseImfFixdate(text: string): number | undefined {
  if (text.length !== 29) return undefined;
  if (!SHORT_DAYS.includes(text.slice(0, 3))) return undefined;
  if (text.slice(3, 5) !== ', ' || text[7] !== ' ' || text[11] !== ' ' || text[16] !== ' ') {
    return undefined;
  }
  if (text.slice(25) !== ' GMT') return undefined;
  const day = twoDigits(text, 5);
  const month = monthIndex(text.slice(8, 11));
  const year = fourDigits(text, 12);
  const time = readTime(text, 17);
  if (day === undefined || month === undefined || year === undefined || time === undefined) {
    return undefined;
  }
  return toEpochMs(year, month, day, time);
}

/** `Sunday, 06-Nov-94 08:49:37 GMT`: a long day name, then 24 fixed characters. */
function parseRfc850(text: string, comma: number, nowMs: number): number | undefined {
  if (text.length !== comma + 24) return undefined;
  if (!LONG_DAYS.includes(text.slice(0, comma))) return undefined;
  const at = comma + 2; // start of `06-Nov-94`
  if (text[comma + 1] !== ' ' || text[at + 2] !== '-' || text[at + 6] !== '-') return undefined;
  if (text[at + 9] !== ' ' || text.slice(at + 18) !== ' GMT') return undefined;
  const day = twoDigits(text, at);
  const month = monthIndex(text.slice(at + 3, at + 6));
  const yy = twoDigits(text, at + 7);
  const time = readTime(text, at + 10);
  if (day === undefined || month === undefined || yy === undefined || time === undefined) {
    return undefined;
  }
  const year = resolveTwoDigitYear(yy, month, day, time, nowMs);
  return year === undefined ? undefined : toEpochMs(year, month, day, time);
}

/** `Sun Nov  6 08:49:37 1994`: fixed width, 24 characters; a one-digit day is space-padded. */
function parseAsctime(text: string): number | undefined {
  if (text.length !== 24) return undefined;
  if (!SHORT_DAYS.includes(text.slice(0, 3))) return undefined;
  if (text[3] !== ' ' || text[7] !== ' ' || text[10] !== ' ' || text[19] !== ' ') return undefined;
  const month = monthIndex(text.slice(4, 7));
  // date3 = month SP ( 2DIGIT / ( SP DIGIT ) )
  const day = text[8] === ' ' ? digitAt(text, 9) : twoDigits(text, 8);
  const year = fourDigits(text, 20);
  const time = readTime(text, 11);
  if (day === undefined || month === undefined || year === undefined || time === undefined) {
    return undefined;
  }
  return toEpochMs(year, month, day, time);
}

type Time = readonly [hour: number, minute: number, second: number];

/**
 * RFC 9110: "interpret a timestamp that appears to be more than 50 years in the future as
 * representing the most recent year in the past that had the same last two digits".
 * Candidates are the matching years in the next, current and previous century of `nowMs`;
 * the latest whose instant is ≤ now + 50 years (same month, day and time, 50 years on) wins.
 */
function resolveTwoDigitYear(
  yy: number,
  month: number,
  day: number,
  [hour, minute, second]: Time,
  nowMs: number,
): number | undefined {
  if (!Number.isFinite(nowMs)) return undefined;
  const now = new Date(nowMs);
  const nowYear = now.getUTCFullYear();
  if (Number.isNaN(nowYear)) return undefined; // outside the Date range
  const limit = new Date(nowMs);
  limit.setUTCFullYear(nowYear + 50);
  const base = nowYear - (nowYear % 100) + yy;
  for (const year of [base + 100, base, base - 100]) {
    if (Date.UTC(year, month, day, hour, minute, second) <= limit.getTime()) return year;
  }
  return undefined;
}

/** Reads `HH:MM:SS` at `at`: hour 00–23, minute 00–59, second 00–60 (a leap second). */
function readTime(text: string, at: number): Time | undefined {
  if (text[at + 2] !== ':' || text[at + 5] !== ':') return undefined;
  const hour = twoDigits(text, at);
  const minute = twoDigits(text, at + 3);
  const second = twoDigits(text, at + 6);
  if (hour === undefined || minute === undefined || second === undefined) return undefined;
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  return [hour, minute, second];
}

/** Validates the calendar date and returns epoch ms (≥ 0), or `undefined`. */
function toEpochMs(year: number, month: number, day: number, [hour, minute, second]: Time): number | undefined {
  if (year < 1970 || day < 1 || day > daysInMonth(year, month)) return undefined;
  // Years ≥ 1970 keep Date.UTC away from its "0–99 means 1900–1999" quirk. A leap second
  // (:60) lands on the first instant of the next minute, which is what it precedes.
  return Date.UTC(year, month, day, hour, minute, second);
}

function daysInMonth(year: number, month: number): number {
  if (month === 1) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 3 || month === 5 || month === 8 || month === 10 ? 30 : 31;
}

function monthIndex(name: string): number | undefined {
  const index = MONTHS.indexOf(name);
  return index === -1 ? undefined : index;
}

function digitAt(text: string, at: number): number | undefined {
  const c = text.charCodeAt(at);
  return c >= 48 && c <= 57 ? c - 48 : undefined;
}

function twoDigits(text: string, at: number): number | undefined {
  const a = digitAt(text, at);
  const b = digitAt(text, at + 1);
  return a === undefined || b === undefined ? undefined : a * 10 + b;
}

function fourDigits(text: string, at: number): number | undefined {
  const high = twoDigits(text, at);
  const low = twoDigits(text, at + 2);
  return high === undefined || low === undefined ? undefined : high * 100 + low;
}
