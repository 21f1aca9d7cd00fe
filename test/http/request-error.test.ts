import { inspect } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isHttpRequestError } from '../../src/http/index.js';
import { secretValues } from '../../src/http/redact.js';
import { requestErrorFrom } from '../../src/http/request-error.js';

const context = (url: string, headers?: Headers) => ({
  method: 'GET',
  url,
  secretParams: ['token', 'api_key'],
  secrets: secretValues(url, ['token', 'api_key'], headers),
  outcome: 'failed' as const,
  attempts: 1,
  downstream: 'api',
});

describe('requestErrorFrom (regression: fetch errors quote what they failed on)', () => {
  it('undici’s credentials error: URL redacted in the message, the original (which quotes it) dropped', () => {
    const url = 'http://alice:PASSSECRET@api.example.com/x?token=TOKENSECRET';
    const undici = new TypeError(`Request cannot be constructed from a URL that includes credentials: ${url}`);
    const copy = requestErrorFrom(undici, context(url));
    expect(isHttpRequestError(copy)).toBe(true);
    expect(copy.url).toBe('http://REDACTED@api.example.com/x?token=REDACTED');
    expect(copy.message).toContain('includes credentials: http://REDACTED@api.example.com/x?token=REDACTED');
    expect(copy.cause).toBeUndefined();
    const dump = inspect(copy, { depth: 8, showHidden: true }) + String(copy.stack);
    for (const secret of ['PASSSECRET', 'TOKENSECRET', 'alice']) expect(dump).not.toContain(secret);
  });

  it('a clean network error is kept as the cause; its code and its cause’s message are carried', () => {
    const url = 'https://api.example.com/x?token=TOKENSECRET';
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' });
    const undici = new TypeError('fetch failed', { cause: refused });
    const copy = requestErrorFrom(undici, context(url));
    expect(copy.errorCode).toBe('ECONNREFUSED');
    expect(copy.message).toBe('GET https://api.example.com/x?token=REDACTED: fetch failed: connect ECONNREFUSED 10.0.0.1:443');
    expect(copy.cause).toBe(undici);
    expect(copy.outcome).toBe('failed');
    expect(copy.attempts).toBe(1);
    expect(copy.downstream).toBe('api');
  });

  it('a cause chain that quotes a header credential anywhere is dropped, and the value hidden', () => {
    const headers = new Headers({ authorization: 'Bearer AUTHSECRET123' });
    const deep = new Error('rejected header value "Bearer AUTHSECRET123"');
    const error = new TypeError('fetch failed', { cause: new Error('wrapped', { cause: deep }) });
    const copy = requestErrorFrom(error, context('https://h/x', headers));
    expect(copy.cause).toBeUndefined();
    expect(inspect(copy, { depth: 8 })).not.toContain('AUTHSECRET123');
    const quoted = requestErrorFrom(new Error('bad: AUTHSECRET123'), context('https://h/x', headers));
    expect(quoted.message).not.toContain('AUTHSECRET123');
  });

  it('never throws on values that are not errors', () => {
    const url = 'https://h/x?token=TOKENSECRET';
    for (const thrown of [
      undefined,
      null,
      42,
      `failed on ${url}`,
      { message: 7 },
      new Proxy(
        {},
        {
          ownKeys: () => {
            throw new Error('no');
          },
        },
      ),
    ]) {
      const copy = requestErrorFrom(thrown, context(url));
      expect(copy.message).not.toContain('TOKENSECRET');
    }
  });

  it('property: a secret of the request never survives in the copy’s message, and a cause mentioning it is dropped', () => {
    const secret = fc.stringMatching(/^[A-Za-z0-9]{8,16}$/);
    fc.assert(
      fc.property(
        secret,
        secret,
        fc.constantFrom('message', 'cause-message', 'cause-field', 'none'),
        fc.string({ maxLength: 20 }),
        (password, token, where, noise) => {
          const url = `https://me:${password}@h.example/p?token=${token}`;
          const leak = `${noise} ${url} ${token} ${password}`;
          const cause =
            where === 'cause-message'
              ? new Error(leak)
              : where === 'cause-field'
                ? Object.assign(new Error('x'), { detail: leak })
                : undefined;
          const error = new TypeError(where === 'message' ? leak : 'fetch failed', cause === undefined ? undefined : { cause });
          const copy = requestErrorFrom(error, context(url));
          expect(copy.message).not.toContain(password);
          expect(copy.message).not.toContain(token);
          if (where !== 'none') expect(copy.cause).toBeUndefined();
          else expect(copy.cause).toBe(error);
        },
      ),
    );
  });
});
