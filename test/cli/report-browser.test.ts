import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { HERD_STRATEGY_NAMES } from '../../src/sim/scenarios/herd.js';
import { launchChromium } from '../support/chromium.js';
import { runCli } from './helpers.js';

const root = new URL('../..', import.meta.url).pathname;

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the --report page in Chromium', () => {
  it('renders one series per strategy with a legend, makes no network request, and is screenshotted', async () => {
    const work = mkdtempSync(join(tmpdir(), 'kindly-report-'));
    const profile = mkdtempSync(join(tmpdir(), 'kindly-chromium-'));
    dirs.push(work, profile);
    const report = join(work, 'herd.html');
    const r = await runCli(['sim', 'herd', '--seeds', '20', '--report', report]);
    expect(r.code).toBe(0);

    const context = await launchChromium(profile);
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      const requests: string[] = [];
      page.on('request', (req) => requests.push(req.url()));
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(pathToFileURL(report).href);

      const charts = page.locator('svg.chart');
      expect(await charts.count()).toBe(2);
      for (let i = 0; i < 2; i++) {
        const chart = charts.nth(i);
        const names = await chart.locator('path.series').evaluateAll((els) => els.map((e) => e.getAttribute('data-series')));
        expect(names).toEqual(HERD_STRATEGY_NAMES);
        const legend = await chart.locator('g.legend-item').evaluateAll((els) => els.map((e) => e.textContent));
        expect(legend).toEqual(HERD_STRATEGY_NAMES);
        // Every series is actually drawn: a non-empty box on the page.
        const boxes = await chart
          .locator('path.series')
          .evaluateAll((els) => els.map((e) => (e as SVGGraphicsElement).getBBox()).map((b) => b.width > 0 && b.height > 0));
        expect(boxes.every(Boolean)).toBe(true);
        expect(await chart.locator('text.marker-label').allTextContents()).toEqual(
          expect.arrayContaining(['capacity: 10 per slot', 'lower bound: all served by 1.0 s']),
        );
      }
      expect(await page.locator('table tbody tr').count()).toBe(HERD_STRATEGY_NAMES.length);
      expect(requests.filter((u) => !u.startsWith('file:'))).toEqual([]);
      expect(errors).toEqual([]);

      mkdirSync(join(root, 'artifacts'), { recursive: true });
      await page.screenshot({ path: join(root, 'artifacts', 'report.png'), fullPage: true });
    } finally {
      await context.close();
    }
  });
});
