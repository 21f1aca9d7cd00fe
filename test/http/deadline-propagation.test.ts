import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchThrough, nodeHttpHandler } from '../../src/http/index.js';
import { isGiveUpError } from '../../src/index.js';
import { downstream } from '../../src/runtime/downstream.js';
import { type Loopback, listen } from './support/loopback.js';

/**
 * client → A → B → slow C with a 1 s deadline at the client (long enough that a loaded
 * machine still gets the request to C within it). The budget travels in
 * `x-request-timeout-ms`, shrinking at each hop; C's handler sees its signal abort instead of
 * finishing its 5 s of work; no hop starts a call after its deadline.
 *
 * The assertions are about the budget each hop was given (deterministic: it can only shrink),
 * not about durations against a wall-clock tolerance; the timings go into the printed figure.
 */
interface Hop {
  name: string;
  /** The budget the hop received, as sent. */
  received: number;
  /** Its absolute deadline, from the middleware (monotonic ms). */
  deadline: number;
  /** When its outbound attempts started (monotonic ms). */
  attemptStarts: number[];
}

/** The client's budget. */
const BUDGET_MS = 1_000;

const servers: Loopback[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function relay(name: string, next: string, hops: Hop[]): Promise<Loopback> {
  const callee = downstream(name, {
    budget: false,
    retry: { maxAttempts: 3, backoff: { shape: 'constant', baseMs: 10, jitter: 'none' } },
  });
  const server = await listen(
    nodeHttpHandler(async (req: IncomingMessage, res: ServerResponse) => {
      const hop: Hop = {
        name,
        received: Number(req.headers['x-request-timeout-ms']),
        deadline: req.kindly?.deadline ?? Number.NaN,
        attemptStarts: [],
      };
      hops.push(hop);
      callee.on('attempt-start', (e) => hop.attemptStarts.push(e.atMs));
      try {
        const upstream = await fetchThrough(callee, next);
        res.writeHead(upstream.status).end();
      } catch {
        if (!res.headersSent) res.writeHead(504).end();
      }
    }),
  );
  servers.push(server);
  return server;
}

describe('deadline propagation over HTTP, real servers on loopback', () => {
  it("the client's 1 s budget reaches C, whose work is aborted at the deadline; no hop calls after its deadline", async () => {
    const hops: Hop[] = [];
    let cFinished = false;
    const cAbort: { at?: number; reason?: string } = {};
    const c = await listen(
      nodeHttpHandler(async (req: IncomingMessage, res: ServerResponse) => {
        const kindly = req.kindly;
        if (kindly === undefined) throw new Error('no kindly context');
        hops.push({
          name: 'C',
          received: Number(req.headers['x-request-timeout-ms']),
          deadline: kindly.deadline,
          attemptStarts: [],
        });
        // Five seconds of work, abandoned as soon as the request's signal says so.
        await new Promise<void>((resolve) => {
          const work = setTimeout(() => {
            cFinished = true;
            resolve();
          }, 5_000);
          kindly.signal.addEventListener('abort', () => {
            clearTimeout(work);
            cAbort.at = performance.now();
            cAbort.reason = (kindly.signal.reason as Error).name;
            resolve();
          });
        });
        if (!res.headersSent && !res.destroyed) res.writeHead(504).end();
      }),
    );
    servers.push(c);
    const b = await relay('B', c.url, hops);
    const a = await relay('A', b.url, hops);

    // Warm up fetch in this process (its HTTP parser is compiled on first use), so that the
    // figure shows steady-state transit times.
    const warm = await listen((_req, res) => res.writeHead(204).end());
    servers.push(warm);
    await (await fetch(warm.url)).arrayBuffer();

    const client = downstream('client', { budget: false });
    let clientStart = Number.NaN;
    client.on('attempt-start', (e) => {
      if (e.attempt === 1) clientStart = e.atMs;
    });
    // The client runs outside any request, so it names the hosts that take part; A and B call
    // from inside their handlers' deadline scopes and propagate by default.
    const error = await fetchThrough(client, a.url, { timeoutMs: BUDGET_MS, propagateHeaders: { hosts: ['127.0.0.1'] } }).catch(
      (e: unknown) => e,
    );
    const clientGaveUpAt = performance.now();
    const clientDeadline = clientStart + BUDGET_MS;
    expect(isGiveUpError(error)).toBe(true);
    expect(((error as Error).cause as Error).name).toBe('DeadlineExceededError');

    // C notices when its own deadline passes or the caller hangs up; wait for that (not for
    // a fixed time, which a loaded machine can overrun), well within C's 5 s of work.
    for (let waited = 0; cAbort.reason === undefined && !cFinished && waited < 4_000; waited += 10)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const byName = Object.fromEntries(hops.map((h) => [h.name, h])) as Record<'A' | 'B' | 'C', Hop>;
    expect(Object.keys(byName).sort()).toEqual(['A', 'B', 'C']);

    // The budget as received shrinks hop by hop and never exceeds the client's.
    expect(byName.A.received).toBeLessThanOrEqual(BUDGET_MS);
    expect(byName.B.received).toBeLessThanOrEqual(byName.A.received);
    expect(byName.C.received).toBeLessThanOrEqual(byName.B.received);
    expect(byName.C.received).toBeGreaterThan(0);
    // (Absolute deadlines are not compared: a relative budget leaves out the time the request
    // spent in transit, so each hop's deadline may be that much later than its caller's — a
    // millisecond on loopback, reported in the figure below.)
    // No hop started an outbound attempt at or after its deadline.
    for (const hop of [byName.A, byName.B]) for (const at of hop.attemptStarts) expect(at).toBeLessThan(hop.deadline);
    // C's work was abandoned: its signal aborted (deadline, or the caller hanging up first).
    expect(cFinished).toBe(false);
    expect(['DeadlineExceededError', 'AbortError']).toContain(cAbort.reason);

    console.log(
      `[figure] budget received: A ${byName.A.received} ms, B ${byName.B.received} ms, C ${byName.C.received} ms; ` +
        `C's deadline ${(byName.C.deadline - clientDeadline).toFixed(1)} ms after the client's; ` +
        `C's work stopped ${((cAbort.at ?? Number.NaN) - clientGaveUpAt).toFixed(1)} ms after the client gave up ` +
        `(${((cAbort.at ?? Number.NaN) - clientDeadline).toFixed(1)} ms after the client's deadline), reason ${cAbort.reason}`,
    );
  });
});
