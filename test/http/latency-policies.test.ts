import { afterEach, describe, expect, it } from 'vitest';
import { fetchThrough } from '../../src/http/index.js';
import { downstream, GiveUpError } from '../../src/index.js';
import { systemClock } from '../../src/testing/index.js';
import { type Loopback, listen } from './support/loopback.js';

let server: Loopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/**
 * A real queueing server: `workers` requests are served at once, each for `serviceMs`; the
 * rest wait in a FIFO queue (node:http keeps accepting, so latency grows with concurrency).
 */
async function queueingServer(workers: number, serviceMs: number) {
  let active = 0;
  let inSystem = 0;
  const depth: number[] = [];
  const waiting: (() => void)[] = [];
  const loopback = await listen((_req, res) => {
    inSystem++;
    depth.push(inSystem);
    const serve = () => {
      active++;
      systemClock.sleep(serviceMs).then(() => {
        active--;
        inSystem--;
        res.end('ok');
        waiting.shift()?.();
      });
    };
    if (active < workers) serve();
    else waiting.push(serve);
  });
  return { loopback, depth };
}

describe('latency policies against a real queueing HTTP server', () => {
  it('the adaptive limit keeps the server queue short where no limit lets it grow to the callers’ count', async () => {
    const callers = 32;
    const run = async (limited: boolean) => {
      const q = await queueingServer(4, 20);
      server = q.loopback;
      const api = downstream('queue', {
        retry: false,
        ...(limited ? { concurrency: { windowSamples: 20 } } : {}),
      });
      const end = systemClock.monotonic() + 2_500;
      let ok = 0;
      let rejected = 0;
      await Promise.all(
        Array.from({ length: callers }, async () => {
          while (systemClock.monotonic() < end) {
            try {
              const r = await fetchThrough(api, `${q.loopback.url}/work`);
              await r.text();
              ok++;
            } catch (error) {
              if (!(error instanceof GiveUpError) || error.reason !== 'rejected') throw error;
              rejected++;
              // A rejected caller comes back a little later (it would serve a fallback).
              await systemClock.sleep(5);
            }
          }
        }),
      );
      await server.close();
      server = undefined;
      // The server's queue over the second half of the run (the limit has learned by then).
      const late = q.depth.slice(Math.floor(q.depth.length / 2));
      const meanDepth = late.reduce((a, b) => a + b, 0) / late.length;
      return { ok, rejected, meanDepth, stats: api.stats() };
    };
    const none = await run(false);
    const adaptive = await run(true);
    console.log(
      `[figure] real server (4 workers × 20 ms, ${callers} callers): mean requests in the server, second half: ` +
        `none ${none.meanDepth.toFixed(1)}, adaptive ${adaptive.meanDepth.toFixed(1)} (limit ${adaptive.stats.concurrencyLimit}); ` +
        `answers none ${none.ok}, adaptive ${adaptive.ok}; rejected ${adaptive.rejected}`,
    );
    // Without a limit every caller sits in the server's queue; with it, well under half of that.
    expect(none.meanDepth).toBeGreaterThan(callers * 0.6);
    expect(adaptive.meanDepth).toBeLessThan(none.meanDepth * 0.5);
    expect(adaptive.rejected).toBeGreaterThan(0);
    expect(adaptive.stats.concurrencyRejections).toBe(adaptive.rejected);
    // Limiting costs little throughput: the server was busy either way (the no-load probe
    // at the start holds the limit at 3 for a moment).
    expect(adaptive.ok).toBeGreaterThan(none.ok * 0.6);
  });

  it('fetch hedges a GET that is slow, the first response wins and the slow request is aborted', async () => {
    let n = 0;
    let abandoned = 0;
    server = await listen((req, res) => {
      const slow = n++ === 0;
      req.on('close', () => {
        if (!res.writableEnded) abandoned++;
      });
      systemClock.sleep(slow ? 500 : 10).then(() => {
        if (!res.destroyed) res.end(slow ? 'slow' : 'fast');
      });
    });
    const api = downstream('hedged', { retry: false, hedging: { delayMs: 50, maxExtraLoad: 1 } });
    const response = await fetchThrough(api, `${server.url}/item`);
    expect(await response.text()).toBe('fast');
    expect(api.stats()).toMatchObject({ hedges: 1, hedgeWins: 1, inFlight: 0 });
    // The slow request's connection is closed by its abort, not left to finish.
    for (let i = 0; i < 100 && abandoned === 0; i++) await systemClock.sleep(10);
    expect(abandoned).toBe(1);
    // POST is not idempotent: never hedged.
    n = 0;
    const post = await fetchThrough(api, `${server.url}/item`, { method: 'POST', body: 'x' });
    expect(await post.text()).toBe('slow');
    expect(api.stats().hedges).toBe(1);
  });
});
