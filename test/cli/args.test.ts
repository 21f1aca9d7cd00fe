import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseOptionValue, parseSimArgs } from '../../src/cli/args.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { herd } from '../../src/sim/scenarios/herd.js';

const clients = herd.options.find((o) => o.name === 'clients')!;

describe('parseSimArgs', () => {
  it('reads flags, --name value and --name=value', () => {
    expect(parseSimArgs(herd, ['--json', '--clients', '50', '--slot-ms=20', '--report', 'r.html', '--config=c.json'])).toEqual({
      json: true,
      help: false,
      report: 'r.html',
      config: 'c.json',
      params: { clients: 50, 'slot-ms': 20 },
    });
  });

  it('rejects unknown options, missing values, repeats and stray arguments', () => {
    for (const argv of [
      ['--nope'],
      ['--clients'],
      ['--clients', '--json'],
      ['--seed', '1', '--seed', '2'],
      ['herd'],
      ['--'],
      ['--report='],
    ]) {
      expect(() => parseSimArgs(herd, argv), argv.join(' ')).toThrow(UsageError);
    }
  });

  it('takes a negative-looking value after an option (the range check then decides)', () => {
    expect(() => parseSimArgs(herd, ['--seed', '-1'])).toThrow(/--seed must be ≥ 0, got -1/);
  });
});

describe('parseOptionValue', () => {
  it('accepts whole numbers with separators and exponents', () => {
    expect(parseOptionValue(clients, '1_000_000', 'x')).toBe(1_000_000);
    expect(parseOptionValue(clients, '1e6', 'x')).toBe(1_000_000);
  });

  it('never yields NaN or a value outside the declared range', () => {
    fc.assert(
      fc.property(fc.string(), (raw) => {
        try {
          const v = parseOptionValue(clients, raw, 'x') as number;
          expect(Number.isInteger(v)).toBe(true);
          expect(v).toBeGreaterThanOrEqual(clients.min!);
          expect(v).toBeLessThanOrEqual(clients.max!);
        } catch (error) {
          expect(error).toBeInstanceOf(UsageError);
          expect((error as Error).message).not.toContain('\n');
        }
      }),
    );
  });
});
