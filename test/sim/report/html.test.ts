import { describe, expect, it } from 'vitest';
import { renderHtml } from '../../../src/sim/report/html.js';
import type { Report } from '../../../src/sim/report/model.js';

const report: Report = {
  title: 'kindly-calls sim test <1>',
  notes: ['A note & more.'],
  parameters: [['clients', '100']],
  tables: [
    { title: 'Summary', table: { columns: ['strategy', 'requests'], align: ['left', 'right'], rows: [['fixed', '550']] } },
  ],
  charts: [{ title: 'c', xLabel: 'x', yLabel: 'y', series: [{ name: 'fixed', points: [[0, 1]] }] }],
};

describe('renderHtml', () => {
  it('is one self-contained page: inline style and SVG, no script, no external resource', () => {
    const html = renderHtml(report);
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).toContain('<meta charset="utf-8">');
    expect(html).toContain("default-src 'none'");
    expect(html).not.toMatch(/<script|<link|src="http|href="http|@import|url\(http/i);
    expect(html).toContain('<svg');
    expect(html).toContain('<td class="num">550</td>');
    expect(html).toContain('kindly-calls sim test &lt;1&gt;');
    expect(html).toContain('A note &amp; more.');
  });
});
