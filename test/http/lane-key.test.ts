import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { laneKeyOf } from '../../src/http/lane-key.js';

const parsed = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
};

describe('laneKeyOf (the fast path must agree with the URL parser)', () => {
  it('hosts with port, the spellings the parser rewrites, and text that is not a URL', () => {
    const cases = [
      'http://api.example.com/x?token=1',
      'https://api.example.com:8443/v1',
      'http://127.0.0.1:39211/',
      'http://api.example.com:80/x',
      'https://api.example.com:443',
      'http://API.Example.com/x',
      'http://user:pass@api.example.com/x',
      'http://0x7f.1/',
      'http://2130706433/',
      'http://127.1:8080/',
      'http://010.0.0.1/',
      'http://example.com.:8080/',
      'http://[::1]:8080/',
      'http://bücher.example/',
      'http://a.b:65536/',
      'not a url',
    ];
    for (const url of cases) expect(laneKeyOf(url), url).toBe(parsed(url));
  });

  it('property: for generated http(s) URLs, the same host as new URL(url).host', () => {
    const label = fc.stringMatching(/^[a-zA-Z0-9-]{1,6}$/);
    const host = fc.oneof(
      fc.array(label, { minLength: 1, maxLength: 4 }).map((labels) => labels.join('.')),
      fc.tuple(fc.nat(300), fc.nat(300), fc.nat(300), fc.nat(300)).map((parts) => parts.join('.')),
      fc.stringMatching(/^(0x[0-9a-f]{1,4}|[0-9]{1,10})(\.[0-9]{1,3}){0,3}\.?$/),
    );
    fc.assert(
      fc.property(
        fc.constantFrom('http', 'https'),
        host,
        fc.option(fc.integer({ min: 0, max: 70_000 }).map(String)),
        fc.constantFrom('', '/', '/p?q=1', '?x', '#f'),
        (scheme, name, port, rest) => {
          const url = `${scheme}://${name}${port === null ? '' : `:${port}`}${rest}`;
          expect(laneKeyOf(url)).toBe(parsed(url));
        },
      ),
    );
  });
});
