import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const child = fileURLToPath(new URL('../fixtures/hygiene-child.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

describe('resource hygiene', () => {
  it('100,000 calls with attempt timeouts: no MaxListenersExceeded warning, no live timer, the process exits by itself', async () => {
    const proc = spawn(tsx, [child], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
    expect(err).toBe('');
    expect(out).not.toContain('WARNING');
    const report = JSON.parse(out.trim().split('\n').at(-1) ?? '{}');
    expect(report.calls).toBe(100_000);
    // Nothing left that could keep the event loop alive: no Timeout, no Immediate.
    expect(report.handles).toEqual([]);
    expect(code).toBe(0);
  });
});
