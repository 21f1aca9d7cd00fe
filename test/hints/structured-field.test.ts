import { describe, expect, it } from 'vitest';
import { parseDictionary, parseList } from '../../src/hints/structured-field.js';

const simplify = (members: ReturnType<typeof parseList>) =>
  members?.map((m) => ({ key: m.key, value: m.value, params: Object.fromEntries(m.params) }));

describe('structured fields (RFC 9651)', () => {
  it('parses a list of strings and tokens with parameters', () => {
    expect(simplify(parseList('"default";r=0;t=10, burst; r=5 ;t=1'))).toBeUndefined(); // SP before ; is not allowed
    expect(simplify(parseList('"default";r=0;t=10, burst;r=5;t=1'))).toEqual([
      {
        key: undefined,
        value: { kind: 'string', value: 'default' },
        params: { r: { kind: 'integer', value: 0 }, t: { kind: 'integer', value: 10 } },
      },
      {
        key: undefined,
        value: { kind: 'token', value: 'burst' },
        params: { r: { kind: 'integer', value: 5 }, t: { kind: 'integer', value: 1 } },
      },
    ]);
  });

  it('allows spaces after ";" and OWS around ","', () => {
    expect(parseList('a; r=1 ,\tb')?.length).toBe(2);
  });

  it('parses a dictionary, bare keys being true', () => {
    expect(simplify(parseDictionary('limit=100, remaining=0, reset=10, flag'))).toEqual([
      { key: 'limit', value: { kind: 'integer', value: 100 }, params: {} },
      { key: 'remaining', value: { kind: 'integer', value: 0 }, params: {} },
      { key: 'reset', value: { kind: 'integer', value: 10 }, params: {} },
      { key: 'flag', value: { kind: 'boolean', value: true }, params: {} },
    ]);
  });

  it('reads every bare item type', () => {
    const list = parseList('-5, 1.25, "a\\"b", tok/en:x, :aGk=:, ?0, @1700000000, %"x%20y", (1 2);p, *star');
    expect(list?.map((m) => m.value)).toEqual([
      { kind: 'integer', value: -5 },
      { kind: 'decimal', value: 1.25 },
      { kind: 'string', value: 'a"b' },
      { kind: 'token', value: 'tok/en:x' },
      { kind: 'bytes', value: 'aGk=' },
      { kind: 'boolean', value: false },
      { kind: 'date', value: 1700000000 },
      { kind: 'display-string', value: 'x%20y' },
      { kind: 'inner-list' },
      { kind: 'token', value: '*star' },
    ]);
  });

  it('rejects the whole field on any syntax error', () => {
    const bad = [
      'a,',
      ',a',
      'a,,b',
      '"unterminated',
      '1234567890123456',
      '1.2345',
      '1234567890123.5',
      '-',
      'A=1',
      'a;B=1',
      '"bad\\n"',
      ':not base64!:',
      '?2',
      '(1 2',
      'a b',
      'a;r=',
    ];
    for (const value of bad) expect(parseList(value), value).toBeUndefined();
    expect(parseDictionary('"default";r=0')).toBeUndefined();
    expect(parseDictionary('Limit=1')).toBeUndefined();
  });

  it('treats an empty or all-space field as an empty list', () => {
    expect(parseList('')).toEqual([]);
    expect(parseList('   ')).toEqual([]);
  });
});
