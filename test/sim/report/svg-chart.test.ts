import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeXml, niceTicks, renderChart } from '../../../src/sim/report/svg-chart.js';

describe('niceTicks', () => {
  it('uses steps of 1, 2 or 5 × 10^k from 0 to at least max', () => {
    expect(niceTicks(10)).toEqual([0, 2, 4, 6, 8, 10]);
    expect(niceTicks(27.2)).toEqual([0, 5, 10, 15, 20, 25, 30]);
    expect(niceTicks(0)).toEqual([0, 1]);
  });

  it('always covers [0, max] with evenly spaced ticks', () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-3, max: 1e9, noNaN: true }), (max) => {
        const t = niceTicks(max);
        expect(t[0]).toBe(0);
        expect(t[t.length - 1]!).toBeGreaterThanOrEqual(max * (1 - 1e-9));
        expect(t.length).toBeLessThanOrEqual(13);
      }),
    );
  });
});

describe('renderChart', () => {
  const chart = {
    title: 'Requests <per> slot',
    xLabel: 'time (s)',
    yLabel: 'requests',
    series: [
      {
        name: 'fixed',
        points: [
          [0, 100],
          [0.1, 0],
          [1.1, 90],
        ] as [number, number][],
      },
      {
        name: 'a "quoted" & odd',
        points: [
          [0, 100],
          [0.2, 5],
        ] as [number, number][],
      },
    ],
    markers: [
      { axis: 'y' as const, value: 10, label: 'capacity' },
      { axis: 'x' as const, value: 1, label: 'lower bound' },
    ],
    steps: true,
  };

  it('draws one path per series with its name, a legend entry each, labelled axes and the markers', () => {
    const svg = renderChart(chart, 'c1');
    expect(svg.match(/<path class="series"/g)).toHaveLength(2);
    expect(svg).toContain('data-series="fixed"');
    expect(svg).toContain('data-series="a &quot;quoted&quot; &amp; odd"');
    expect(svg.match(/class="legend-item"/g)).toHaveLength(2);
    expect(svg).toContain('>time (s)</text>');
    expect(svg).toContain('>requests</text>');
    expect(svg).toContain('>capacity</text>');
    expect(svg).toContain('>lower bound</text>');
    expect(svg).toContain('Requests &lt;per&gt; slot');
    expect(svg).not.toMatch(/NaN|Infinity/);
  });

  it('escapes every XML special character', () => {
    expect(escapeXml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
});
