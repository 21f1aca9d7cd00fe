// The herd against a real server: `clients` callers in this process, all at once, each one
// `downstream().fetch` until it succeeds. Requests are counted by the server (its log).

import { fetchThrough } from '../../src/http/index.js';
import type { DownstreamOptions } from '../../src/runtime/downstream.js';
import { downstream } from '../../src/runtime/downstream.js';
import { systemClock } from '../../src/time/system-clock.js';

export interface RealHerdRun {
  /** When the last caller's success arrived, ms after the start. */
  allSucceededMs: number;
  failed: number;
}

export async function realHerd(url: string, clients: number, options: DownstreamOptions): Promise<RealHerdRun> {
  const api = downstream(`herd-${clients}`, options);
  const start = systemClock.monotonic();
  let last = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      try {
        const res = await fetchThrough(api, url);
        await res.arrayBuffer();
        if (res.ok) last = Math.max(last, systemClock.monotonic() - start);
        else failed++;
      } catch {
        failed++;
      }
    }),
  );
  return { allSucceededMs: last, failed };
}
