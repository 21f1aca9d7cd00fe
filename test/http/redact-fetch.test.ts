// Through the fetch wrapper, end to end: URL credentials that the URL parser reads where a
// naive scan for `//` looks elsewhere (a `//` and an `@` later in the path) never reach the
// error, its cause or the events, and the platform's own message is kept readable.
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchThrough, isHttpRequestError } from '../../src/http/index.js';
import { downstream, isGiveUpError, type KindlyEvent } from '../../src/index.js';
import { type Loopback, listen } from './support/loopback.js';

/** The redacted URL as quoted in a message: the only place `REDACTED` belongs. */
const REDACTED_URL_PATTERN = /http:\/\/REDACTED@\S+/g;

const servers: Loopback[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe('fetchThrough — credentials in a URL whose path holds `//` and `@`', () => {
  it('never reach the GiveUpError, its cause or the events; the platform’s message is not mangled', async () => {
    let hits = 0;
    const server = await listen((_req, res) => {
      hits++;
      res.writeHead(200).end();
    });
    servers.push(server);
    const { host } = new URL(server.url);
    for (const url of [`http:user:hunter2@${host}/a//b@c`, `http:\\\\user:hunter2@${host}/v1//x@y?token=QUERYSECRET`]) {
      const api = downstream('api', { retry: false, budget: false });
      const events: KindlyEvent[] = [];
      api.onAny((e) => events.push(e));
      // The platform refuses a URL with credentials, with a TypeError that quotes it whole.
      const error = await fetchThrough(api, url).catch((e: unknown) => e);
      expect(isGiveUpError(error), url).toBe(true);
      const cause = isGiveUpError(error) ? error.cause : undefined;
      expect(isHttpRequestError(cause), url).toBe(true);
      expect(isHttpRequestError(cause) && cause.url, url).toMatch(
        /^http:\/\/REDACTED@127\.0\.0\.1:\d+\/(a\/\/b@c|v1\/\/x@y\?token=REDACTED)$/,
      );
      const dump =
        inspect({ error, events }, { depth: 12, showHidden: true }) + String((error as Error).stack) + JSON.stringify(events);
      for (const secret of ['hunter2', 'user:', 'QUERYSECRET']) expect(dump, url).not.toContain(secret);
      // Only the secrets are replaced in the platform's text, not every `b` in it.
      const message = String((cause as Error).message);
      expect(message.replaceAll(REDACTED_URL_PATTERN, ''), url).not.toContain('REDACTED');
    }
    expect(hits).toBe(0);
  });
});
