import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP server on loopback that behaves like the herd experiment's callee (SPEC S11.1):
 * time is cut into slots; the first `capacity` requests arriving in a slot are served (200),
 * the rest rejected (429); every response is held until the end of its slot. It records, per
 * slot, how many requests and how many retries (requests whose `x-retry-attempt` > 0) arrived.
 */
export interface SlotLimitedServer {
  url: string;
  /** Requests per slot index (slot 0 starts at `reset()`). */
  requestsPerSlot: number[];
  retriesPerSlot: number[];
  /** Time (ms after reset) at which the last 200 was delivered. */
  lastSuccessMs: number;
  totalRequests: number;
  reset(): void;
  close(): Promise<void>;
}

export async function startSlotLimitedServer(options: {
  capacity: number;
  slotMs: number;
  /** Sent on 429s when set, as delay-seconds. */
  retryAfterSeconds?: number;
}): Promise<SlotLimitedServer> {
  let t0 = performance.now();
  const served = new Map<number, number>();
  const state: Omit<SlotLimitedServer, 'url' | 'reset' | 'close'> = {
    requestsPerSlot: [],
    retriesPerSlot: [],
    lastSuccessMs: 0,
    totalRequests: 0,
  };
  const server: Server = createServer((req, res) => {
    const now = performance.now() - t0;
    const slot = Math.floor(now / options.slotMs);
    const retry = Number(req.headers['x-retry-attempt'] ?? '0') > 0;
    state.totalRequests++;
    state.requestsPerSlot[slot] = (state.requestsPerSlot[slot] ?? 0) + 1;
    if (retry) state.retriesPerSlot[slot] = (state.retriesPerSlot[slot] ?? 0) + 1;
    const count = (served.get(slot) ?? 0) + 1;
    served.set(slot, count);
    const ok = count <= options.capacity;
    const slotEnd = (slot + 1) * options.slotMs;
    req.resume();
    setTimeout(
      () => {
        if (ok) {
          state.lastSuccessMs = Math.max(state.lastSuccessMs, performance.now() - t0);
          res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        } else {
          const headers: Record<string, string> = { 'content-type': 'text/plain' };
          if (options.retryAfterSeconds !== undefined) headers['retry-after'] = String(options.retryAfterSeconds);
          res.writeHead(429, headers).end('slow down');
        }
      },
      Math.max(0, slotEnd - (performance.now() - t0)),
    );
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/`,
    reset() {
      t0 = performance.now();
      served.clear();
      state.requestsPerSlot = [];
      state.retriesPerSlot = [];
      state.lastSuccessMs = 0;
      state.totalRequests = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as SlotLimitedServer;
}
