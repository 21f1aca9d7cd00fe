import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Loopback, listen } from '../http/support/loopback.js';
import { chromiumRunnable, launchChromium } from '../support/chromium.js';

/**
 * kindly's ESM build in a real page (Debian's chromium, headless, driven by playwright-core):
 * retries 503 → 200, and while the browser is offline no attempt is made — the call waits for
 * the `online` event and then completes.
 *
 * Without chromium the suite is skipped locally; with CI=true it runs and fails instead.
 */

describe.skipIf(!chromiumRunnable)('kindly in headless Chromium', () => {
  let server: Loopback;
  let context: BrowserContext;
  let page: Page;
  let profile: string;
  const hits: Record<string, number> = {};
  const attemptHeaders: string[] = [];

  beforeAll(async () => {
    const bundle = await build({
      entryPoints: [fileURLToPath(new URL('./entry.ts', import.meta.url))],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      write: false,
    });
    const script = bundle.outputFiles[0]?.text ?? '';
    server = await listen((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      hits[path] = (hits[path] ?? 0) + 1;
      if (path === '/') {
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            `<!doctype html><title>kindly</title><script type="module">import * as kindly from '/kindly.js'; window.kindly = kindly; window.ready = true;</script>`,
          );
      } else if (path === '/kindly.js') {
        res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
      } else if (path === '/flaky' || path === '/flaky-lite') {
        if (path === '/flaky') attemptHeaders.push(String(req.headers['x-retry-attempt']));
        const n = hits[path] ?? 0;
        res.writeHead(n < 3 ? 503 : 200, { 'content-type': 'text/plain' }).end(n < 3 ? 'busy' : 'hello from 200');
      } else if (path === '/data') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('fresh data');
      } else {
        res.writeHead(404).end();
      }
    });
    profile = await mkdtemp(join(tmpdir(), 'kindly-chromium-'));
    context = await launchChromium(profile);
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${server.url}/`);
    await page.waitForFunction(() => (window as { ready?: boolean }).ready === true);
  }, 30_000);

  afterAll(async () => {
    await context?.close();
    await server?.close();
    if (profile !== undefined) await rm(profile, { recursive: true, force: true });
  });

  it('the page retries 503 → 200 through kindly, numbering attempts', async () => {
    const result = await page.evaluate(async () => {
      const k = (window as unknown as { kindly: typeof import('./entry.js') }).kindly;
      const api = k.downstream('api', { retry: { maxAttempts: 3, backoff: { shape: 'constant', baseMs: 20, jitter: 'none' } } });
      const response = await k.fetchThrough(api, '/flaky');
      return { status: response.status, text: await response.text() };
    });
    expect(result).toEqual({ status: 200, text: 'hello from 200' });
    expect(hits['/flaky']).toBe(3);
    expect(attemptHeaders).toEqual(['0', '1', '2']);
  });

  it("kindly-calls/lite's downstream retries 503 → 200 in the page too, and turns pacing down by name", async () => {
    const result = await page.evaluate(async () => {
      const k = (window as unknown as { kindly: typeof import('./entry.js') }).kindly;
      const api = k.liteDownstream('lite', {
        retry: { maxAttempts: 3, backoff: { shape: 'constant', baseMs: 20, jitter: 'none' } },
      });
      const response = await k.fetchThrough(api, '/flaky-lite');
      let refused = '';
      try {
        k.liteDownstream('paced', { pacing: {} } as never);
      } catch (error) {
        refused = String(error);
      }
      return { status: response.status, text: await response.text(), refused };
    });
    expect(result.status).toBe(200);
    expect(result.text).toBe('hello from 200');
    expect(hits['/flaky-lite']).toBe(3);
    expect(result.refused).toContain('`pacing` needs adaptive pacing, which kindly-calls/lite leaves out');
  });

  it('offline: no attempt is made (none counted, none at the server); back online, the call completes', async () => {
    await context.setOffline(true);
    expect(await page.evaluate(() => navigator.onLine)).toBe(false);
    await page.evaluate(() => {
      const w = window as unknown as { kindly: typeof import('./entry.js'); attempts: number; outcome?: string };
      const api = w.kindly.downstream('offline', {
        retry: { maxAttempts: 3, backoff: { shape: 'constant', baseMs: 10, jitter: 'none' } },
      });
      w.attempts = 0;
      api.on('attempt-start', () => {
        w.attempts++;
      });
      w.kindly.fetchThrough(api, '/data').then(
        async (r) => {
          w.outcome = `${r.status} ${await r.text()}`;
        },
        (e: unknown) => {
          w.outcome = `error ${String(e)}`;
        },
      );
    });
    // Long enough for three attempts and their backoff to have burnt out several times over.
    await page.waitForTimeout(500);
    const during = await page.evaluate(() => {
      const w = window as unknown as { attempts: number; outcome?: string };
      return { attempts: w.attempts, outcome: w.outcome ?? 'pending' };
    });
    expect(during).toEqual({ attempts: 0, outcome: 'pending' });
    expect(hits['/data'] ?? 0).toBe(0);

    await context.setOffline(false);
    await page.waitForFunction(() => (window as unknown as { outcome?: string }).outcome !== undefined);
    const after = await page.evaluate(() => {
      const w = window as unknown as { attempts: number; outcome?: string };
      return { attempts: w.attempts, outcome: w.outcome };
    });
    expect(after).toEqual({ attempts: 1, outcome: '200 fresh data' });
    expect(hits['/data']).toBe(1);
  });
});
