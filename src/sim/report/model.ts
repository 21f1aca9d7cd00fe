/**
 * What a scenario hands back for people to read: tables and charts, independent of how they
 * are shown (a text table on the terminal, an HTML page with inline SVG).
 */

export interface Table {
  columns: readonly string[];
  /** Cells already formatted as text; one array per row, as long as `columns`. */
  rows: readonly (readonly string[])[];
  /** Per column: numbers read best right-aligned. @default 'left' */
  align?: readonly ('left' | 'right')[];
}

export interface Series {
  name: string;
  /** Palette index, so one strategy keeps its colour across panels. @default its position */
  color?: number;
  /** Drawn dashed, for a reference curve such as the lower bound. */
  dashed?: boolean;
  /** Points `[x, y]` in chart units, x ascending. */
  points: readonly (readonly [number, number])[];
}

/** A reference line drawn across a chart, e.g. the physical lower bound. */
export interface Marker {
  axis: 'x' | 'y';
  value: number;
  label: string;
}

export interface Chart {
  title: string;
  xLabel: string;
  yLabel: string;
  series: readonly Series[];
  markers?: readonly Marker[];
  /** Draw each series as a step line (values hold over a bucket) rather than joined points. */
  steps?: boolean;
  /** Cut the x axis at this value (for a zoomed view of the start of a run). */
  xMax?: number;
  /** Fix the y axis top (panels that share axes). */
  yMax?: number;
  /**
   * Small multiples: consecutive charts with the same group are laid out side by side, under
   * the group's name as a heading, each drawn small.
   */
  group?: string;
}

export interface Report {
  title: string;
  /** One paragraph each: what was simulated and how to read it. */
  notes: readonly string[];
  /** Parameter name → value as shown. */
  parameters: readonly (readonly [string, string])[];
  tables: readonly { title: string; table: Table }[];
  charts: readonly Chart[];
}
