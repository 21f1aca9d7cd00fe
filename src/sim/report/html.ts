import type { Report, Table } from './model.js';
import { escapeXml, renderChart } from './svg-chart.js';

const STYLE = `
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d1d1f; margin: 24px auto; max-width: 1000px; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; }
p.params { color: #555; margin: 0 0 16px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 12px; border-bottom: 1px solid #ddd; text-align: left; white-space: nowrap; }
th { background: #f4f4f6; font-weight: 600; }
td.num { text-align: right; }
.notes p { margin: 6px 0; color: #333; }
svg.chart { display: block; margin: 8px 0 20px; background: #fff; }
div.panels { display: flex; flex-wrap: wrap; gap: 0 8px; }
div.panels svg.chart { margin: 4px 0 8px; }
svg.chart.small .chart-title { font-size: 13px; }
svg.chart.small .tick { font-size: 11px; }
svg.chart.small .axis-label { font-size: 11.5px; }
svg .chart-title { font-size: 15px; font-weight: 600; fill: #1d1d1f; }
svg .tick { font-size: 12px; fill: #555; }
svg .axis-label { font-size: 13px; fill: #333; }
svg .axis { stroke: #333; stroke-width: 1; }
svg .grid { stroke: #e6e6e6; stroke-width: 1; }
svg .marker { stroke: #b00020; stroke-width: 1.4; stroke-dasharray: 6 4; }
svg .marker-label { font-size: 12px; fill: #b00020; }
svg .legend { font-size: 12.5px; fill: #1d1d1f; }
`;

function renderHtmlTable(table: Table): string {
  const align = (i: number) => (table.align?.[i] === 'right' ? ' class="num"' : '');
  const head = table.columns.map((c, i) => `<th${align(i)}>${escapeXml(c)}</th>`).join('');
  const rows = table.rows.map((r) => `<tr>${r.map((c, i) => `<td${align(i)}>${escapeXml(c)}</td>`).join('')}</tr>`).join('\n');
  return `<table>\n<thead><tr>${head}</tr></thead>\n<tbody>\n${rows}\n</tbody>\n</table>`;
}

/**
 * The `--report` page: one self-contained HTML file (inline CSS and SVG, no script, no
 * external resource; a Content-Security-Policy forbids fetching anything), so it can be
 * attached to a ticket or opened from disk.
 */
export function renderHtml(report: Report): string {
  const parts: string[] = [];
  parts.push('<!doctype html>');
  parts.push('<html lang="en">');
  parts.push('<head>');
  parts.push('<meta charset="utf-8">');
  parts.push(
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
  );
  parts.push('<meta name="viewport" content="width=device-width, initial-scale=1">');
  parts.push(`<title>${escapeXml(report.title)}</title>`);
  parts.push(`<style>${STYLE}</style>`);
  parts.push('</head>');
  parts.push('<body>');
  parts.push(`<h1>${escapeXml(report.title)}</h1>`);
  if (report.parameters.length > 0) {
    parts.push(
      `<p class="params">${report.parameters.map(([k, v]) => `${escapeXml(k)} <b>${escapeXml(v)}</b>`).join(' · ')}</p>`,
    );
  }
  for (const { title, table } of report.tables) {
    if (title) parts.push(`<h2>${escapeXml(title)}</h2>`);
    parts.push(renderHtmlTable(table));
  }
  let group: string | undefined;
  report.charts.forEach((chart, i) => {
    if (chart.group !== group) {
      if (group !== undefined) parts.push('</div>');
      group = chart.group;
      if (group !== undefined) parts.push(`<h2>${escapeXml(group)}</h2>`, '<div class="panels">');
    }
    parts.push(renderChart(chart, `chart-${i + 1}`));
  });
  if (group !== undefined) parts.push('</div>');
  if (report.notes.length > 0) {
    parts.push('<div class="notes">');
    for (const note of report.notes) parts.push(`<p>${escapeXml(note)}</p>`);
    parts.push('</div>');
  }
  parts.push('</body>');
  parts.push('</html>');
  return `${parts.join('\n')}\n`;
}
