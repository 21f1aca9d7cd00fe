import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * nodeHttpHandler's `onError` reporter failing must not take the server down, whether it throws
 * or — being async — rejects: the client still gets its 500 and the server keeps serving. Each
 * scenario runs a real server in a process of its own with Node's default handling of
 * unhandled rejections, which ends the process (support/server-on-error.child.ts).
 */
const CHILD = fileURLToPath(new URL('./support/server-on-error.child.ts', import.meta.url));

function scenario(name: string) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', CHILD, name], { encoding: 'utf8', timeout: 20_000 });
  const last = run.stdout.trim().split('\n').pop() ?? '';
  return { code: run.status, stderr: run.stderr, report: last.startsWith('{') ? (JSON.parse(last) as unknown) : undefined };
}

const ANSWERED = {
  answers: [
    { status: 500, body: 'Internal Server Error' },
    { status: 500, body: 'Internal Server Error' },
  ],
  reported: ['handler bug at /async', 'handler bug at /sync'],
};

describe('nodeHttpHandler — an onError reporter that fails', () => {
  it('an async reporter that rejects: the client gets its 500, the process no unhandled rejection', () => {
    const run = scenario('rejects');
    expect({ code: run.code, report: run.report }, run.stderr).toEqual({ code: 0, report: ANSWERED });
  });

  it('a reporter that returns a rejected promise: the same', () => {
    const run = scenario('returnsRejected');
    expect({ code: run.code, report: run.report }, run.stderr).toEqual({ code: 0, report: ANSWERED });
  });

  it('a reporter that throws: the same', () => {
    const run = scenario('throws');
    expect({ code: run.code, report: run.report }, run.stderr).toEqual({ code: 0, report: ANSWERED });
  });
});
