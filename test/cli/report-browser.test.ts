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
  it('renders small multiples per strategy and the callers-served curve, makes no network request, and is screenshotted', async () => {
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

      // One small panel per strategy, on shared axes, each with its own colour…
      const panels = page.locator('div.panels svg.chart.small');
      expect(await panels.count()).toBe(HERD_STRATEGY_NAMES.length);
      const panelSeries = await panels
        .locator('path.series')
        .evaluateAll((els) => els.map((e) => [e.getAttribute('data-series'), e.getAttribute('stroke')]));
      expect(panelSeries.map(([name]) => name)).toEqual(HERD_STRATEGY_NAMES);
      expect(new Set(panelSeries.map(([, stroke]) => stroke)).size).toBe(HERD_STRATEGY_NAMES.length);
      const yTicks = await panels.evaluateAll((els) =>
        els.map((e) => [...e.querySelectorAll('text.tick')].map((t) => t.textContent).join(',')),
      );
      expect(new Set(yTicks).size).toBe(1); // shared axes: identical tick labels in every panel
      // …laid out side by side: at least three panels share the first row.
      const tops = await panels.evaluateAll((els) => els.map((e) => Math.round(e.getBoundingClientRect().top)));
      expect(tops.filter((t) => t === tops[0]).length).toBeGreaterThanOrEqual(3);

      // Then callers served over time, every strategy beside the dashed lower bound.
      const served = page.locator('svg.chart:not(.small)');
      expect(await served.count()).toBe(1);
      const names = await served.locator('path.series').evaluateAll((els) => els.map((e) => e.getAttribute('data-series')));
      expect(names).toEqual([...HERD_STRATEGY_NAMES, 'lower bound']);
      expect(await served.locator('path.series[data-series="lower bound"]').getAttribute('stroke-dasharray')).toBe('5 4');
      const legend = await served.locator('g.legend-item').evaluateAll((els) => els.map((e) => e.textContent));
      expect(legend).toEqual([...HERD_STRATEGY_NAMES, 'lower bound']);
      // Every series is actually drawn: a non-empty box on the page.
      const boxes = await page
        .locator('path.series')
        .evaluateAll((els) => els.map((e) => (e as SVGGraphicsElement).getBBox()).map((b) => b.width > 0 && b.height > 0));
      expect(boxes.every(Boolean)).toBe(true);
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
