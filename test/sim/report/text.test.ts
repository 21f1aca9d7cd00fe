import { describe, expect, it } from 'vitest';
import { bareSeconds, jsonSpread, number, seconds, spreadText } from '../../../src/sim/report/format.js';
import { renderTable, renderText } from '../../../src/sim/report/text.js';

describe('text rendering', () => {
  it('aligns columns, numbers to the right', () => {
    const out = renderTable({
      columns: ['strategy', 'requests'],
      align: ['left', 'right'],
      rows: [
        ['fixed', '550'],
        ['adaptive', '190'],
      ],
    });
    expect(out.split('\n')).toEqual(['strategy  requests', '────────  ────────', 'fixed          550', 'adaptive       190']);
  });

  it('renders title, parameters, tables and notes', () => {
    const out = renderText({
      title: 'T',
      parameters: [
        ['a', '1'],
        ['b', '2'],
      ],
      tables: [{ title: '', table: { columns: ['x'], rows: [['y']] } }],
      charts: [],
      notes: ['n'],
    });
    expect(out).toBe('T\na 1 · b 2\n\nx\n─\ny\n\nn\n');
  });
});

describe('formatting', () => {
  it('shows seconds with the decimals the value needs', () => {
    expect(seconds(10_000)).toBe('10.0 s');
    expect(seconds(27_200)).toBe('27.2 s');
    expect(seconds(1850)).toBe('1.85 s');
    expect(seconds(1234)).toBe('1.234 s');
    expect(seconds(Number.POSITIVE_INFINITY)).toBe('never');
    expect(bareSeconds(1300)).toBe('1.3');
  });

  it('shows a spread as "median (min–max)", or one value when it does not vary', () => {
    expect(spreadText({ min: 550, median: 550, max: 550 })).toBe('550');
    expect(spreadText({ min: 295, median: 302.5, max: 311 })).toBe('302.5 (295–311)');
    expect(number(1.23456, 2)).toBe('1.23');
  });

  it('turns non-finite values into null for JSON', () => {
    expect(jsonSpread({ min: 1, median: Number.POSITIVE_INFINITY, max: Number.POSITIVE_INFINITY })).toEqual({
      min: 1,
      median: null,
      max: null,
    });
  });
});
