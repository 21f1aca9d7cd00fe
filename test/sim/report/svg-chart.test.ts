import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  chartLayout,
  chartTicks,
  escapeXml,
  legendPositions,
  niceTicks,
  renderChart,
  seriesPath,
  strokeWidth,
} from '../../../src/sim/report/svg-chart.js';

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

describe('renderChart’s parts', () => {
  const identity = { x: (v: number) => v, y: (v: number) => v };
  const margin = { left: 10, right: 10, top: 0, bottom: 0 };

  it('legendPositions: entries flow left to right and wrap at the plot’s right edge', () => {
    // Each entry is 28 px + 7.2 px per character wide, with 28 px between entries.
    expect(legendPositions(['a', 'b'], 200, margin)).toEqual({
      at: [
        [10, 0],
        [10 + 28 + 7.2 + 28, 0],
      ],
      rows: 1,
    });
    const wrapped = legendPositions(['a'.repeat(10), 'b'.repeat(10), 'c'], 200, margin);
    expect(wrapped.at.map(([, row]) => row)).toEqual([0, 1, 1]);
    expect(wrapped.rows).toBe(2);
    expect(legendPositions([], 200, margin).rows).toBe(0);
  });

  it('chartLayout: a panel of small multiples has no legend and the small frame', () => {
    const series = [{ name: 'x', points: [[0, 1]] as [number, number][] }];
    const full = chartLayout({ title: '', xLabel: '', yLabel: '', series });
    const small = chartLayout({ title: '', xLabel: '', yLabel: '', series, group: 'g' });
    expect(full).toMatchObject({ small: false, width: 960, legendRows: 1 });
    expect(small).toMatchObject({ small: true, width: 320, legendRows: 0 });
    expect(full.height - full.plotH).toBeGreaterThan(small.height - small.plotH);
  });

  it('chartTicks: covers every point and marker with headroom; a given xMax/yMax wins; points beyond xMax do not raise y', () => {
    const chart = {
      title: '',
      xLabel: '',
      yLabel: '',
      series: [
        {
          name: 's',
          points: [
            [0, 10],
            [5, 95],
          ] as [number, number][],
        },
      ],
      markers: [{ axis: 'x' as const, value: 7, label: '' }],
    };
    const t = chartTicks(chart, false);
    expect(t.xTicks.at(-1)).toBeGreaterThanOrEqual(7);
    expect(t.yTicks.at(-1)).toBeGreaterThanOrEqual(95 * 1.05);
    const cut = chartTicks({ ...chart, xMax: 2 }, false);
    expect(cut.xTicks.at(-1)).toBe(2);
    expect(cut.yTicks.at(-1)).toBeLessThan(20);
    expect(chartTicks({ ...chart, yMax: 300 }, true).yTicks.at(-1)).toBe(300);
  });

  it('seriesPath: lines or steps, cut after the first point beyond xMax', () => {
    const points = [
      [0, 0],
      [1, 5],
      [2, 3],
      [3, 4],
    ] as [number, number][];
    expect(seriesPath(points, identity, false)).toBe('M0 0L1 5L2 3L3 4');
    expect(seriesPath(points, identity, true)).toBe('M0 0H1V5H2V3H3V4');
    expect(seriesPath(points, identity, false, 1.5)).toBe('M0 0L1 5L2 3');
    expect(seriesPath([], identity, false)).toBe('');
  });

  it('strokeWidth: a lone series is 2 px; earlier series are drawn wider, from 4 down to 1.5 px', () => {
    expect(strokeWidth(0, 1)).toBe(2);
    expect([0, 1, 2].map((i) => strokeWidth(i, 3))).toEqual([4, 2.8, 1.5]);
  });
});
