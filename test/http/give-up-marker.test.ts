import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeHttpHandler } from '../../src/http/index.js';
import { downstream } from '../../src/index.js';
import { type Loopback, listen } from './support/loopback.js';

const servers: Loopback[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function get(url: string): Promise<{ status: number; exhausted: string | undefined }> {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, exhausted: res.headers['x-retry-exhausted'] as string | undefined }),
      );
    })
      .on('error', reject)
      .end();
  });
}

describe('"don\'t retry" marks the response of the request whose call gave up', () => {
  it('when that call timed out on the timer shared with other requests (regression: the mark went to another response)', async () => {
    // Timeouts of 1 s and more share one native timer, which fires in the async context of
    // the request that armed it: here /a, whose own call succeeded before /b's timed out.
    const d = downstream('dep', { retry: false, attemptTimeoutMs: 1_000 });
    let bStarted: () => void = () => undefined;
    const bStart = new Promise<void>((resolve) => {
      bStarted = resolve;
    });
    const server = await listen(
      nodeHttpHandler(
        async (req) => {
          if (req.url === '/a') {
            await d.call(async () => 'ok');
            await bStart;
            // Outlives /b's give-up, then fails on its own: a plain 500, nothing to do with a retry.
            await new Promise((resolve) => setTimeout(resolve, 1_300));
            throw new Error('a bug in /a');
          }
          const b = d.call(() => new Promise<never>(() => undefined));
          bStarted();
          await b;
        },
        { onError: () => undefined },
      ),
    );
    servers.push(server);
    const a = get(`${server.url}/a`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const b = get(`${server.url}/b`);
    expect(await b).toEqual({ status: 503, exhausted: '1' });
    expect(await a).toEqual({ status: 500, exhausted: undefined });
  });
});
