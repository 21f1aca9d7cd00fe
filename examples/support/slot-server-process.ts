/**
 * The herd experiment's callee as a real HTTP server in its own process, so that
 * serving 100 responses and the 100 callers parsing them do not share one thread.
 *
 * Time is cut into slots from the last `reset`; the first `capacity` requests arriving in a
 * slot are served (200), the rest rejected (429); every response is held until the end of its
 * slot plus `releaseMarginMs` (so a client whose timer fires a hair early — Node timers run off
 * a cached loop time — cannot land its retry in the slot before the intended one). Requests
 * with `x-retry-attempt` > 0 count as retries. A reset may switch `Retry-After` (delay-seconds)
 * on 429s on or off. Controlled over IPC by slot-limited-server.ts.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const capacity = Number(process.env.CAPACITY);
const slotMs = Number(process.env.SLOT_MS);
const releaseMarginMs = Number(process.env.RELEASE_MARGIN_MS ?? '10');
let retryAfter: string | undefined;

let t0 = performance.now();
let served = new Map<number, number>();
let stats = { requestsPerSlot: [] as number[], retriesPerSlot: [] as number[], lastSuccessMs: 0, totalRequests: 0 };

const server = createServer((req, res) => {
  const now = performance.now() - t0;
  const slot = Math.floor(now / slotMs);
  stats.totalRequests++;
  if (process.env.TRACE) process.stderr.write(`${now.toFixed(1)} `);
  stats.requestsPerSlot[slot] = (stats.requestsPerSlot[slot] ?? 0) + 1;
  if (Number(req.headers['x-retry-attempt'] ?? '0') > 0) stats.retriesPerSlot[slot] = (stats.retriesPerSlot[slot] ?? 0) + 1;
  const count = (served.get(slot) ?? 0) + 1;
  served.set(slot, count);
  const ok = count <= capacity;
  req.resume();
  setTimeout(
    () => {
      if (ok) {
        stats.lastSuccessMs = Math.max(stats.lastSuccessMs, performance.now() - t0);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      } else {
        res.writeHead(429, retryAfter ? { 'retry-after': retryAfter } : {}).end('slow down');
      }
    },
    Math.max(0, (slot + 1) * slotMs + releaseMarginMs - (performance.now() - t0)),
  );
});
server.keepAliveTimeout = 60_000;

process.on('message', (message: { type: string; retryAfterSeconds?: number }) => {
  if (message.type === 'reset') {
    retryAfter = message.retryAfterSeconds === undefined ? undefined : String(message.retryAfterSeconds);
    t0 = performance.now();
    served = new Map();
    stats = { requestsPerSlot: [], retriesPerSlot: [], lastSuccessMs: 0, totalRequests: 0 };
    process.send?.({ type: 'reset' });
  } else if (message.type === 'stats') {
    process.send?.({
      type: 'stats',
      stats: {
        ...stats,
        requestsPerSlot: Array.from(stats.requestsPerSlot, (n) => n ?? 0),
        retriesPerSlot: Array.from(stats.retriesPerSlot, (n) => n ?? 0),
      },
    });
  } else if (message.type === 'close') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});

// If the demo dies, so does its server: an orphan would hold the port and the terminal.
process.on('disconnect', () => process.exit(0));

server.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'listening', port: (server.address() as AddressInfo).port });
});
