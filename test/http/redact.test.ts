import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SECRET_QUERY_PARAMS, redactUrl } from '../../src/http/index.js';

describe('redactUrl (SPEC S9)', () => {
  it('hides credentials, secret query values and the fragment; keeps everything else byte for byte', () => {
    expect(redactUrl('https://user:pa55@api.example.com:8443/v1/x?page=2&api_key=abc&q=a%20b#access_token=t')).toBe(
      'https://REDACTED@api.example.com:8443/v1/x?page=2&api_key=REDACTED&q=a%20b',
    );
    expect(redactUrl(new URL('https://h/p?Token=1&TOKEN=2&tokens=3'))).toBe('https://h/p?Token=REDACTED&TOKEN=REDACTED&tokens=3');
    expect(redactUrl('/relative?signature=xyz&x=1')).toBe('/relative?signature=REDACTED&x=1');
    expect(redactUrl('https://h/p?a%5Fkey=1&api%5Fkey=2', ['api_key'])).toBe('https://h/p?a%5Fkey=1&api%5Fkey=REDACTED');
    expect(redactUrl('https://h/?flag&key')).toBe('https://h/?flag&key=REDACTED');
    expect(redactUrl('https://h/p?custom=1', ['custom'])).toBe('https://h/p?custom=REDACTED');
    expect(redactUrl('https://h/a@b?x=1')).toBe('https://h/a@b?x=1');
  });

  it('property: a secret value never survives, whatever surrounds it', () => {
    const name = fc.constantFrom(...DEFAULT_SECRET_QUERY_PARAMS);
    const safe = fc.stringMatching(/^[a-z0-9]{1,8}$/);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(safe, safe), { maxLength: 4 }),
        name,
        fc.stringMatching(/^[A-Za-z0-9]{12,20}$/),
        fc.boolean(),
        fc.stringMatching(/^[A-Za-z0-9]{12,20}$/),
        (others, secretName, secret, withUser, password) => {
          const query = [...others.map(([k, v]) => `${k}=${v}`), `${secretName.toUpperCase()}=${secret}`].join('&');
          const url = `https://${withUser ? `me:${password}@` : ''}h.example/p?${query}#frag`;
          const out = redactUrl(url);
          expect(out).not.toContain(secret);
          if (withUser) expect(out).not.toContain(password);
          for (const [k, v] of others) if (!DEFAULT_SECRET_QUERY_PARAMS.includes(k)) expect(out).toContain(`${k}=${v}`);
        },
      ),
    );
  });
});
