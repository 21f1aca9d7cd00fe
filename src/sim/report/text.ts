import type { Report, Table } from './model.js';

/** Display width of a string: code points (the tables use no wide or combining characters). */
function width(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function pad(s: string, w: number, align: 'left' | 'right'): string {
  const fill = ' '.repeat(Math.max(0, w - width(s)));
  return align === 'right' ? fill + s : s + fill;
}

/** A table as aligned plain-text columns, header underlined. */
export function renderTable(table: Table): string {
  const widths = table.columns.map((c, i) => Math.max(width(c), ...table.rows.map((r) => width(r[i] ?? ''))));
  const align = (i: number) => table.align?.[i] ?? 'left';
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => pad(c, widths[i]!, align(i)))
      .join('  ')
      .trimEnd();
  const out = [line(table.columns), widths.map((w) => '─'.repeat(w)).join('  ')];
  for (const row of table.rows) out.push(line(row));
  return out.join('\n');
}

/** The readable terminal form of a report: title, parameters, tables, notes. */
export function renderText(report: Report): string {
  const out: string[] = [report.title];
  if (report.parameters.length > 0) out.push(report.parameters.map(([k, v]) => `${k} ${v}`).join(' · '));
  for (const { title, table } of report.tables) {
    out.push('');
    if (title) out.push(title);
    out.push(renderTable(table));
  }
  if (report.notes.length > 0) {
    out.push('');
    for (const note of report.notes) out.push(note);
  }
  return `${out.join('\n')}\n`;
}
