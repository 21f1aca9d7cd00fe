import { describe, expect, it } from 'vitest';
import { Progress } from '../../src/cli/progress.js';

function setup() {
  let now = 0;
  let out = '';
  const progress = new Progress({ write: (s: string) => (out += s) }, { monotonic: () => now }, 'job');
  return { progress, at: (t: number) => (now = t), out: () => out };
}

describe('Progress', () => {
  it('stays silent for the first second, then redraws at most every 100 ms, and erases itself', () => {
    const p = setup();
    p.at(500);
    p.progress.update(1, 10);
    expect(p.out()).toBe('');
    p.at(1000);
    p.progress.update(2, 10);
    p.at(1050);
    p.progress.update(3, 10);
    p.at(1100);
    p.progress.update(4, 10);
    expect(p.out()).toBe('\rjob: 20%\x1b[K\rjob: 40%\x1b[K');
    p.progress.done();
    expect(p.out().endsWith('\r\x1b[K')).toBe(true);
  });

  it('writes nothing at all for a short run', () => {
    const p = setup();
    p.at(10);
    p.progress.update(5, 10);
    p.progress.done();
    expect(p.out()).toBe('');
  });
});
