import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './helpers.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'kindly-cli-'));

describe('kindly CLI', () => {
  it('kindly-calls --help and kindly-calls sim --help print usage and exit 0', async () => {
    const main = await runCli(['--help']);
    expect(main.code).toBe(0);
    expect(main.stdout).toContain('kindly-calls sim <scenario> [options]');
    const sim = await runCli(['sim', '--help']);
    expect(sim.code).toBe(0);
    for (const name of ['herd', 'uniform', 'amplification', 'dead-dependency', 'budget', 'queueing', 'hedging', 'latency-spike'])
      expect(sim.stdout).toContain(name);
    const herd = await runCli(['sim', 'herd', '--help']);
    expect(herd.code).toBe(0);
    expect(herd.stdout).toContain('--strategy NAME');
    expect(herd.stdout).toContain('(default 200)');
  });

  it.each([
    [['sim', 'herd', '--bogus']],
    [['sim', 'herd', '--clients']],
    [['sim', 'herd', '--clients', 'many']],
    [['sim', 'herd', '--clients', '2.5']],
    [['sim', 'herd', '--seeds', '0']],
    [['sim', 'herd', '--strategy', 'wild']],
    [['sim', 'herd', '--json=yes']],
    [['sim', 'herd', 'extra']],
    [['sim', 'nope']],
    [['sim']],
    [['frobnicate']],
  ])('%j: one line on stderr, exit 2, nothing on stdout', async (argv) => {
    const r = await runCli(argv);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.endsWith('\n')).toBe(true);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^kindly: /);
  });

  it('prints the readable table by default', async () => {
    const r = await runCli(['sim', 'herd', '--strategy', 'fixed']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const row = r.stdout.split('\n').find((l) => l.startsWith('fixed '));
    expect(row).toMatch(/^fixed\s+550\s+90\s+10\.0 s\s+190 req · 1\.0 s\s+1$/);
  });

  it('--json prints one JSON document with the documented fields', async () => {
    const r = await runCli(['sim', 'herd', '--json', '--seeds', '5', '--strategy', 'all']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.lowerBound).toEqual({ totalRequests: 190, allSucceededMs: 1000 });
    expect(typeof doc.attempts).toBe('number');
    for (const s of doc.strategies) {
      expect(Object.keys(s)).toEqual(
        expect.arrayContaining([
          'strategy',
          'seeds',
          'totalRequests',
          'peakRetriesPerSlot',
          'allSucceededMs',
          'lowerBound',
          'attempts',
        ]),
      );
      expect(Object.keys(s.totalRequests)).toEqual(['min', 'median', 'max']);
    }
    const exp = doc.strategies.find((s: { strategy: string }) => s.strategy === 'exponential');
    expect(exp.allSucceededMs).toEqual({ min: 27_200, median: 27_200, max: 27_200 });
  });

  it('every scenario runs and prints valid JSON', async () => {
    for (const argv of [
      ['uniform', '--duration', '5'],
      ['amplification', '--requests', '3'],
      ['dead-dependency', '--duration', '20', '--down-from', '5', '--down-for', '5'],
      ['budget', '--duration', '2'],
      ['queueing', '--duration', '3'],
      ['hedging', '--duration', '2'],
      ['latency-spike', '--duration', '5', '--spike-at', '2'],
    ]) {
      const r = await runCli(['sim', ...argv, '--json']);
      expect(r.code, argv.join(' ')).toBe(0);
      expect(JSON.parse(r.stdout).scenario).toBe(argv[0]);
    }
  });

  it('the same seed gives byte-identical output', async () => {
    const a = await runCli(['sim', 'herd', '--seeds', '7', '--seed', '3', '--json']);
    const b = await runCli(['sim', 'herd', '--seeds', '7', '--seed', '3', '--json']);
    expect(a.stdout).toBe(b.stdout);
    const ta = await runCli(['sim', 'uniform', '--seed', '3']);
    const tb = await runCli(['sim', 'uniform', '--seed', '3']);
    expect(ta.stdout).toBe(tb.stdout);
  });

  it('accepts --name=value and 1_000-style numbers', async () => {
    const r = await runCli(['sim', 'herd', '--strategy=fixed', '--clients=1_000', '--capacity', '100', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).parameters).toMatchObject({ clients: 1000, capacity: 100 });
  });

  it('--config with valid retry options adds a `config` row', async () => {
    const dir = tmp();
    const file = join(dir, 'retry.json');
    writeFileSync(
      file,
      JSON.stringify({ maxAttempts: 'Infinity', maxElapsedMs: 60_000, backoff: { baseMs: 150, jitter: 'equal', capMs: 3000 } }),
    );
    const r = await runCli(['sim', 'herd', '--strategy', 'fixed', '--seeds', '4', '--config', 'retry.json', '--json'], {
      cwd: dir,
    });
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout).strategies;
    expect(rows.map((s: { strategy: string }) => s.strategy)).toEqual(['fixed', 'config']);
    expect(rows[1].seeds).toBe(4);
    expect(rows[1].gaveUp.max).toBe(0);
  });

  it('--config with invalid options: one line listing every problem, exit 2', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ maxAttempts: 0, backoff: { floorMs: 10, capMs: 5 }, typo: 1 }));
    const r = await runCli(['sim', 'herd', '--config', 'bad.json'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('--config bad.json');
    expect(lines[0]).toContain('maxAttempts');
    expect(lines[0]).toContain('typo');
    expect(lines[0]).toContain('floor');
  });

  it('--config that is missing or not JSON: one line, exit 2', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'broken.json'), '{ "maxAttempts": ');
    for (const name of ['missing.json', 'broken.json']) {
      const r = await runCli(['sim', 'herd', '--config', name], { cwd: dir });
      expect(r.code).toBe(2);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    }
  });

  it('--report writes one HTML file and still prints the table', async () => {
    const dir = tmp();
    const r = await runCli(['sim', 'herd', '--seeds', '3', '--report', 'out.html'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('adaptive');
    expect(r.stderr).toBe('kindly: report written to out.html\n');
    const html = readFileSync(join(dir, 'out.html'), 'utf8');
    expect(html).toContain('<svg');
    // A panel per strategy, then callers served: every strategy plus the lower bound.
    expect(html.match(/<path class="series" data-series="/g)?.length).toBe(7 + 8);
  });

  it('a report that cannot be written there: exit 2 with one line, before the simulation runs', async () => {
    const dir = tmp();
    let readings = 0;
    // The progress clock is read as soon as the simulation starts: it must never be.
    const clock = { monotonic: () => ++readings };
    const r = await runCli(['sim', 'herd', '--strategy', 'fixed', '--report', join(dir, 'no', 'such', 'dir', 'r.html')], {
      isTTY: true,
      clock,
    });
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `kindly: --report ${join(dir, 'no', 'such', 'dir', 'r.html')}: cannot write there (no such folder)`,
    ]);
    expect(readings).toBe(0);
    const folder = await runCli(['sim', 'herd', '--strategy', 'fixed', '--report', dir]);
    expect(folder).toMatchObject({ code: 2, stdout: '' });
    expect(folder.stderr).toContain('is a folder');
  });

  it('a report that fails to write after the run (the folder went away): the results are printed, then exit 1', async () => {
    const dir = tmp();
    const gone = join(dir, 'sub');
    mkdirSync(gone);
    const clock = {
      monotonic: () => {
        // The simulation has started: its folder goes away under it.
        rmSync(gone, { recursive: true, force: true });
        return 0;
      },
    };
    const r = await runCli(['sim', 'herd', '--strategy', 'fixed', '--json', '--report', join(gone, 'r.html')], {
      isTTY: true,
      clock,
    });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).scenario).toBe('herd');
    expect(r.stderr.trimEnd().split('\n').at(-1)).toContain('cannot write report');
  });

  it('shows progress on a terminal only, and only for long runs', async () => {
    // A clock that jumps 400 ms per reading: the run "takes" seconds.
    let t = 0;
    const clock = { monotonic: () => (t += 400) };
    const tty = await runCli(['sim', 'herd', '--strategy', 'full', '--seeds', '20'], { isTTY: true, clock });
    expect(tty.code).toBe(0);
    expect(tty.stderr).toMatch(/\rkindly-calls sim herd: \d+%/);
    expect(tty.stderr.endsWith('\r\x1b[K')).toBe(true);
    const pipe = await runCli(['sim', 'herd', '--strategy', 'full', '--seeds', '20'], { isTTY: false, clock });
    expect(pipe.stderr).toBe('');
    expect(pipe.stdout).toBe(tty.stdout);
  });

  it('ignores EPIPE on its output streams (once per stream), and nothing else', async () => {
    const listeners: ((e: unknown) => void)[] = [];
    const stream = { write: () => true, on: (_event: string, l: (e: unknown) => void) => listeners.push(l) };
    const { run } = await import('../../src/cli/main.js');
    await run(['--help'], { stdout: stream, stderr: stream });
    await run(['--help'], { stdout: stream, stderr: stream });
    expect(listeners).toHaveLength(1);
    expect(() => listeners[0]!(Object.assign(new Error('closed'), { code: 'EPIPE' }))).not.toThrow();
    expect(() => listeners[0]!(Object.assign(new Error('disk'), { code: 'EIO' }))).toThrow('disk');
  });
  it('--config where a scenario has no retry rows: refused, and not offered in its help', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'r.json'), '{ "maxAttempts": 8 }');
    for (const name of ['latency-spike', 'queueing', 'hedging', 'fleet']) {
      const r = await runCli(['sim', name, '--config', 'r.json'], { cwd: dir });
      expect({ name, code: r.code, stdout: r.stdout }).toEqual({ name, code: 2, stdout: '' });
      expect(r.stderr).toBe(
        `kindly: sim ${name}: --config does not apply here: this scenario has no retry rows to add yours beside\n`,
      );
      expect((await runCli(['sim', name, '--help'])).stdout).not.toContain('--config');
    }
    expect((await runCli(['sim', 'herd', '--help'])).stdout).toContain('--config');
  });

  it("the concurrency model's parameters carry the answers' way back, which moves the bound", async () => {
    const of = async (latency: string) =>
      JSON.parse(
        (
          await runCli([
            'sim',
            'herd',
            '--server',
            'concurrency',
            '--strategy',
            'fixed',
            '--seeds',
            '1',
            '--latency-ms',
            latency,
            '--json',
          ])
        ).stdout,
      ) as { parameters: { server: { latencyMs: number } }; lowerBound: { allSucceededMs: number } };
    const [near, far] = [await of('1'), await of('50')];
    expect([near.parameters.server.latencyMs, far.parameters.server.latencyMs]).toEqual([1, 50]);
    expect(far.lowerBound.allSucceededMs - near.lowerBound.allSucceededMs).toBe(49);
  });
  it('the herd document and report name the strategy chosen, your --config options and the spread of first tries', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'r.json'), '{ "maxAttempts": "Infinity", "maxElapsedMs": 60000, "backoff": { "baseMs": 50 } }');
    const argv = ['sim', 'herd', '--strategy', 'full', '--seeds', '2', '--arrival-ms', '30', '--config', 'r.json'];
    const json = JSON.parse((await runCli([...argv, '--json'], { cwd: dir })).stdout) as { parameters: Record<string, unknown> };
    expect(json.parameters).toMatchObject({
      strategy: 'full',
      arrivalMs: 30,
      config: { maxAttempts: 'Infinity', backoff: { baseMs: 50 } },
    });
    const text = (await runCli(argv, { cwd: dir })).stdout;
    for (const fragment of [
      'first tries spread over 30 ms',
      'strategy full',
      'config {"maxAttempts":"Infinity","maxElapsedMs":60000,"backoff":{"baseMs":50}}',
    ])
      expect(text).toContain(fragment);
  });
});
