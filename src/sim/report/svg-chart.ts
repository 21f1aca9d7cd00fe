import type { Chart } from './model.js';

/** Colours that stay distinct for colour-blind readers (Okabe–Ito, then a few more). */
const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#F0E442', '#7F3C8D', '#8C564B'];

/** Palette index of a neutral grey, for reference curves (outside the cycling colours). */
export const REFERENCE_COLOR = PALETTE.length;
const REFERENCE_GREY = '#6b6b6b';

function colorOf(index: number): string {
  return index === REFERENCE_COLOR ? REFERENCE_GREY : PALETTE[index % PALETTE.length]!;
}

const FULL = { width: 960, plotHeight: 320, margin: { left: 64, right: 24, top: 36, bottom: 52 } };
/** A panel of small multiples: three fit across the page. */
const SMALL = { width: 320, plotHeight: 150, margin: { left: 44, right: 12, top: 30, bottom: 44 } };
const LEGEND_ROW_HEIGHT = 20;
/** Rough width of a legend label at 12.5 px: enough for layout, no font metrics needed. */
const LEGEND_CHAR_WIDTH = 7.2;
const LEGEND_GAP = 28;

export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Tick values 0, step, 2·step, … covering [0, max], with step 1, 2 or 5 × 10^k. */
export function niceTicks(max: number, target = 6): number[] {
  if (!(max > 0) || !Number.isFinite(max)) return [0, 1];
  const raw = max / target;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? 10 * magnitude;
  const ticks: number[] = [];
  for (let v = 0; v <= max + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  if (ticks[ticks.length - 1]! < max) ticks.push(Number((ticks[ticks.length - 1]! + step).toPrecision(12)));
  return ticks;
}

function fmt(v: number): string {
  return String(Number(v.toPrecision(6)));
}

/** Where a chart's parts go: its frame, the plot area and the legend. */
export interface ChartLayout {
  /** A panel of small multiples (no legend, smaller type). */
  small: boolean;
  width: number;
  height: number;
  margin: { left: number; right: number; top: number; bottom: number };
  plotW: number;
  plotH: number;
  /** Per series: the legend entry's x and its row. */
  legendAt: [number, number][];
  legendRows: number;
}

/**
 * Legend entries flow left to right, wrapping at the plot's right edge: each entry's x and
 * row, and how many rows that takes.
 */
export function legendPositions(
  names: readonly string[],
  width: number,
  margin: ChartLayout['margin'],
): { at: [number, number][]; rows: number } {
  const at: [number, number][] = [];
  let x = 0;
  let row = 0;
  for (const name of names) {
    const w = 28 + [...name].length * LEGEND_CHAR_WIDTH;
    if (x > 0 && x + w > width - margin.left - margin.right) {
      x = 0;
      row++;
    }
    at.push([margin.left + x, row]);
    x += w + LEGEND_GAP;
  }
  return { at, rows: names.length === 0 ? 0 : row + 1 };
}

/** The chart's frame: full width, or a small-multiples panel; tall enough for its legend. */
export function chartLayout(chart: Chart): ChartLayout {
  const small = chart.group !== undefined;
  const { width, plotHeight, margin } = small ? SMALL : FULL;
  const legend = legendPositions(
    chart.series.map((s) => s.name),
    width,
    margin,
  );
  // A panel of small multiples is named by its title: no legend.
  const legendRows = small ? 0 : legend.rows;
  return {
    small,
    width,
    height: margin.top + plotHeight + margin.bottom + legendRows * LEGEND_ROW_HEIGHT + 8,
    margin,
    plotW: width - margin.left - margin.right,
    plotH: plotHeight,
    legendAt: legend.at,
    legendRows,
  };
}

/**
 * The axes' ticks: from 0 to past the largest value any series (within `xMax`) or marker
 * reaches, with 5 % headroom above; `xMax`/`yMax` given by the chart win (shared axes).
 */
export function chartTicks(chart: Chart, small: boolean): { xTicks: number[]; yTicks: number[] } {
  let xMax = 0;
  let yMax = 0;
  for (const s of chart.series) {
    for (const [x, y] of s.points) {
      if (chart.xMax === undefined || x <= chart.xMax) if (y > yMax) yMax = y;
      if (x > xMax) xMax = x;
    }
  }
  for (const m of chart.markers ?? []) {
    if (m.axis === 'y' && m.value > yMax) yMax = m.value;
    if (m.axis === 'x' && m.value > xMax) xMax = m.value;
  }
  if (chart.xMax !== undefined) xMax = chart.xMax;
  if (chart.yMax !== undefined) yMax = chart.yMax / 1.05;
  return { xTicks: niceTicks(xMax, small ? 4 : 8), yTicks: niceTicks(yMax * 1.05, small ? 4 : 6) };
}

/** Maps data to SVG coordinates (rounded to 0.1 px). */
interface Scale {
  x(v: number): number;
  y(v: number): number;
}

const round1 = (v: number) => Math.round(v * 10) / 10;

/**
 * A series' path: a line through its points, or steps (horizontal then vertical); points past
 * `xMax` are cut after the first one beyond it (the clip path hides the rest of that segment).
 */
export function seriesPath(points: readonly (readonly [number, number])[], scale: Scale, steps: boolean, xMax?: number): string {
  const d: string[] = [];
  let last: readonly [number, number] | undefined;
  for (const p of points) {
    if (xMax !== undefined && last !== undefined && last[0] > xMax) break;
    if (last === undefined) d.push(`M${scale.x(p[0])} ${scale.y(p[1])}`);
    else if (steps) d.push(`H${scale.x(p[0])}V${scale.y(p[1])}`);
    else d.push(`L${scale.x(p[0])} ${scale.y(p[1])}`);
    last = p;
  }
  return d.join('');
}

/** Stroke width of series `i` of `n`: earlier ones wider, so where two coincide both colours show. */
export function strokeWidth(i: number, n: number): number {
  return n === 1 ? 2 : round1(1.5 + (2.5 * (n - 1 - i)) / (n - 1));
}

function renderFrame(chart: Chart, id: string, l: ChartLayout): string[] {
  const { margin, width, height, small } = l;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" id="${escapeXml(id)}" class="${small ? 'chart small' : 'chart'}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeXml(chart.title)}">`,
    `<title>${escapeXml(chart.title)}</title>`,
    `<defs><clipPath id="${escapeXml(id)}-plot"><rect x="${margin.left}" y="${margin.top - 2}" width="${l.plotW}" height="${l.plotH + 4}"/></clipPath></defs>`,
    `<text x="${margin.left}" y="${small ? 18 : 22}" class="chart-title">${escapeXml(chart.title)}</text>`,
  ];
}

/** Grid, ticks, both axes and their labels. */
function renderAxes(chart: Chart, l: ChartLayout, scale: Scale, xTicks: number[], yTicks: number[]): string[] {
  const { margin, plotW, plotH, small } = l;
  const parts: string[] = [];
  for (const t of yTicks) {
    const y = scale.y(t);
    parts.push(`<line x1="${margin.left}" x2="${margin.left + plotW}" y1="${y}" y2="${y}" class="grid"/>`);
    parts.push(`<text x="${margin.left - 6}" y="${y + 4}" text-anchor="end" class="tick">${fmt(t)}</text>`);
  }
  for (const t of xTicks) {
    const x = scale.x(t);
    parts.push(`<line x1="${x}" x2="${x}" y1="${margin.top + plotH}" y2="${margin.top + plotH + 5}" class="axis"/>`);
    parts.push(`<text x="${x}" y="${margin.top + plotH + 18}" text-anchor="middle" class="tick">${fmt(t)}</text>`);
  }
  parts.push(
    `<line x1="${margin.left}" x2="${margin.left + plotW}" y1="${margin.top + plotH}" y2="${margin.top + plotH}" class="axis"/>`,
    `<line x1="${margin.left}" x2="${margin.left}" y1="${margin.top}" y2="${margin.top + plotH}" class="axis"/>`,
    `<text x="${margin.left + plotW / 2}" y="${margin.top + plotH + (small ? 34 : 38)}" text-anchor="middle" class="axis-label">${escapeXml(chart.xLabel)}</text>`,
    `<text transform="translate(${small ? 12 : 16} ${margin.top + plotH / 2}) rotate(-90)" text-anchor="middle" class="axis-label">${escapeXml(chart.yLabel)}</text>`,
  );
  return parts;
}

/** One `<path class="series">` per series, inside the plot's clip path. */
function renderSeries(chart: Chart, id: string, scale: Scale): string[] {
  const parts = [`<g clip-path="url(#${escapeXml(id)}-plot)">`];
  const n = chart.series.length;
  chart.series.forEach((s, i) => {
    const dash = s.dashed ? ' stroke-dasharray="5 4"' : '';
    const d = seriesPath(s.points, scale, chart.steps === true, chart.xMax);
    parts.push(
      `<path class="series" data-series="${escapeXml(s.name)}" d="${d}" fill="none" stroke="${colorOf(s.color ?? i)}" stroke-width="${strokeWidth(i, n)}"${dash} stroke-linejoin="round"><title>${escapeXml(s.name)}</title></path>`,
    );
  });
  parts.push('</g>');
  return parts;
}

/** Dashed reference lines with their labels; an x marker beyond the axis is left out. */
function renderMarkers(chart: Chart, l: ChartLayout, scale: Scale, xTop: number): string[] {
  const { margin, plotW, plotH } = l;
  const parts: string[] = [];
  for (const m of chart.markers ?? []) {
    if (m.axis === 'y') {
      const y = scale.y(m.value);
      parts.push(`<line x1="${margin.left}" x2="${margin.left + plotW}" y1="${y}" y2="${y}" class="marker"/>`);
      parts.push(
        `<text x="${margin.left + plotW - 4}" y="${y - 5}" text-anchor="end" class="marker-label">${escapeXml(m.label)}</text>`,
      );
    } else if (m.value <= xTop) {
      const x = scale.x(m.value);
      parts.push(`<line x1="${x}" x2="${x}" y1="${margin.top}" y2="${margin.top + plotH}" class="marker"/>`);
      parts.push(`<text x="${x + 4}" y="${margin.top + 12}" class="marker-label">${escapeXml(m.label)}</text>`);
    }
  }
  return parts;
}

function renderLegend(chart: Chart, l: ChartLayout): string[] {
  if (l.legendRows === 0) return [];
  const top = l.margin.top + l.plotH + l.margin.bottom;
  return chart.series.map((s, i) => {
    const [x, row] = l.legendAt[i]!;
    const y = top + row * LEGEND_ROW_HEIGHT;
    return `<g class="legend-item" data-legend="${escapeXml(s.name)}"><line x1="${x}" x2="${x + 22}" y1="${y}" y2="${y}" stroke="${colorOf(s.color ?? i)}" stroke-width="3"/><text x="${x + 28}" y="${y + 4}" class="legend">${escapeXml(s.name)}</text></g>`;
  });
}

/**
 * A line chart as a standalone inline `<svg>`: labelled axes, one `<path>` per series (with
 * `class="series"` and `data-series="<name>"`), a legend, and dashed reference lines for the
 * markers. Pure string building: no DOM, no external resources.
 */
export function renderChart(chart: Chart, id: string): string {
  const layout = chartLayout(chart);
  const { xTicks, yTicks } = chartTicks(chart, layout.small);
  const xTop = xTicks[xTicks.length - 1]!;
  const yTop = yTicks[yTicks.length - 1]!;
  const { margin, plotW, plotH } = layout;
  const scale: Scale = {
    x: (v) => round1(margin.left + (v / xTop) * plotW),
    y: (v) => round1(margin.top + plotH - (v / yTop) * plotH),
  };
  return [
    ...renderFrame(chart, id, layout),
    ...renderAxes(chart, layout, scale, xTicks, yTicks),
    ...renderSeries(chart, id, scale),
    ...renderMarkers(chart, layout, scale, xTop),
    ...renderLegend(chart, layout),
    '</svg>',
  ].join('\n');
}
