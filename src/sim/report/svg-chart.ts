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

/**
 * A line chart as a standalone inline `<svg>`: labelled axes, one `<path>` per series (with
 * `class="series"` and `data-series="<name>"`), a legend, and dashed reference lines for the
 * markers. Pure string building: no DOM, no external resources.
 */
export function renderChart(chart: Chart, id: string): string {
  const small = chart.group !== undefined;
  const { width: WIDTH, plotHeight: PLOT_HEIGHT, margin: MARGIN } = small ? SMALL : FULL;
  // Legend entries flow left to right, wrapping at the plot's right edge.
  const legendAt: [number, number][] = [];
  let lx = 0;
  let row = 0;
  for (const s of chart.series) {
    const w = 28 + [...s.name].length * LEGEND_CHAR_WIDTH;
    if (lx > 0 && lx + w > WIDTH - MARGIN.left - MARGIN.right) {
      lx = 0;
      row++;
    }
    legendAt.push([MARGIN.left + lx, row]);
    lx += w + LEGEND_GAP;
  }
  // A panel of small multiples is named by its title: no legend.
  const legendRows = chart.series.length === 0 || small ? 0 : row + 1;
  const height = MARGIN.top + PLOT_HEIGHT + MARGIN.bottom + legendRows * LEGEND_ROW_HEIGHT + 8;
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = PLOT_HEIGHT;

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
  const xTicks = niceTicks(xMax, small ? 4 : 8);
  const yTicks = niceTicks(yMax * 1.05, small ? 4 : 6);
  const xTop = xTicks[xTicks.length - 1]!;
  const yTop = yTicks[yTicks.length - 1]!;
  const sx = (x: number) => MARGIN.left + (x / xTop) * plotW;
  const sy = (y: number) => MARGIN.top + plotH - (y / yTop) * plotH;
  const r = (v: number) => Math.round(v * 10) / 10;

  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" id="${escapeXml(id)}" class="${small ? 'chart small' : 'chart'}" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img" aria-label="${escapeXml(chart.title)}">`,
  );
  parts.push(`<title>${escapeXml(chart.title)}</title>`);
  parts.push(
    `<defs><clipPath id="${escapeXml(id)}-plot"><rect x="${MARGIN.left}" y="${MARGIN.top - 2}" width="${plotW}" height="${plotH + 4}"/></clipPath></defs>`,
  );
  parts.push(`<text x="${MARGIN.left}" y="${small ? 18 : 22}" class="chart-title">${escapeXml(chart.title)}</text>`);

  // Grid and ticks.
  for (const t of yTicks) {
    const y = r(sy(t));
    parts.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${y}" y2="${y}" class="grid"/>`);
    parts.push(`<text x="${MARGIN.left - 6}" y="${y + 4}" text-anchor="end" class="tick">${fmt(t)}</text>`);
  }
  for (const t of xTicks) {
    const x = r(sx(t));
    parts.push(`<line x1="${x}" x2="${x}" y1="${MARGIN.top + plotH}" y2="${MARGIN.top + plotH + 5}" class="axis"/>`);
    parts.push(`<text x="${x}" y="${MARGIN.top + plotH + 18}" text-anchor="middle" class="tick">${fmt(t)}</text>`);
  }
  parts.push(
    `<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${MARGIN.top + plotH}" y2="${MARGIN.top + plotH}" class="axis"/>`,
  );
  parts.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" class="axis"/>`);
  parts.push(
    `<text x="${MARGIN.left + plotW / 2}" y="${MARGIN.top + plotH + (small ? 34 : 38)}" text-anchor="middle" class="axis-label">${escapeXml(chart.xLabel)}</text>`,
  );
  parts.push(
    `<text transform="translate(${small ? 12 : 16} ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle" class="axis-label">${escapeXml(chart.yLabel)}</text>`,
  );

  // Series.
  parts.push(`<g clip-path="url(#${escapeXml(id)}-plot)">`);
  const n = chart.series.length;
  chart.series.forEach((s, i) => {
    const color = colorOf(s.color ?? i);
    // Earlier series are drawn wider, so where two series coincide both colours stay visible.
    const width = n === 1 ? 2 : r(1.5 + (2.5 * (n - 1 - i)) / (n - 1));
    const dash = s.dashed ? ' stroke-dasharray="5 4"' : '';
    const d: string[] = [];
    let last: readonly [number, number] | undefined;
    for (const p of s.points) {
      if (chart.xMax !== undefined && last !== undefined && last[0] > chart.xMax) break;
      if (last === undefined) d.push(`M${r(sx(p[0]))} ${r(sy(p[1]))}`);
      else if (chart.steps) d.push(`H${r(sx(p[0]))}V${r(sy(p[1]))}`);
      else d.push(`L${r(sx(p[0]))} ${r(sy(p[1]))}`);
      last = p;
    }
    parts.push(
      `<path class="series" data-series="${escapeXml(s.name)}" d="${d.join('')}" fill="none" stroke="${color}" stroke-width="${width}"${dash} stroke-linejoin="round"><title>${escapeXml(s.name)}</title></path>`,
    );
  });
  parts.push('</g>');

  // Reference lines.
  for (const m of chart.markers ?? []) {
    if (m.axis === 'y') {
      const y = r(sy(m.value));
      parts.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${y}" y2="${y}" class="marker"/>`);
      parts.push(
        `<text x="${MARGIN.left + plotW - 4}" y="${y - 5}" text-anchor="end" class="marker-label">${escapeXml(m.label)}</text>`,
      );
    } else if (m.value <= xTop) {
      const x = r(sx(m.value));
      parts.push(`<line x1="${x}" x2="${x}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" class="marker"/>`);
      parts.push(`<text x="${x + 4}" y="${MARGIN.top + 12}" class="marker-label">${escapeXml(m.label)}</text>`);
    }
  }

  // Legend.
  const legendTop = MARGIN.top + plotH + MARGIN.bottom;
  (legendRows === 0 ? [] : chart.series).forEach((s, i) => {
    const [x, legendRow] = legendAt[i]!;
    const y = legendTop + legendRow * LEGEND_ROW_HEIGHT;
    const color = colorOf(s.color ?? i);
    parts.push(
      `<g class="legend-item" data-legend="${escapeXml(s.name)}"><line x1="${x}" x2="${x + 22}" y1="${y}" y2="${y}" stroke="${color}" stroke-width="3"/><text x="${x + 28}" y="${y + 4}" class="legend">${escapeXml(s.name)}</text></g>`,
    );
  });
  parts.push('</svg>');
  return parts.join('\n');
}
