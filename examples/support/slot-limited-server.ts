import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** What the slot-limited server saw since the last reset. */
export interface SlotStats {
  requestsPerSlot: number[];
  retriesPerSlot: number[];
  /** ms after reset at which the last 200 left the server. */
  lastSuccessMs: number;
  totalRequests: number;
}

export interface SlotLimitedServer {
  url: string;
  /** Starts a new measurement; 429s carry `Retry-After: retryAfterSeconds` when given. */
  reset(options?: { retryAfterSeconds?: number }): Promise<void>;
  stats(): Promise<SlotStats>;
  close(): Promise<void>;
}

/** Starts slot-server-process.ts in a child process and returns a handle to drive it. */
export async function startSlotLimitedServer(options: { capacity: number; slotMs: number }): Promise<SlotLimitedServer> {
  const child = fork(fileURLToPath(new URL('./slot-server-process.ts', import.meta.url)), {
    execArgv: ['--import', 'tsx'],
    env: {
      ...process.env,
      CAPACITY: String(options.capacity),
      SLOT_MS: String(options.slotMs),
    },
  });
  const next = (type: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const onMessage = (m: Record<string, unknown>) => {
        if (m.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(m);
      };
      const onExit = (code: number | null) => reject(new Error(`slot server exited with code ${code}`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const { port } = await next('listening');
  return {
    url: `http://127.0.0.1:${port as number}/`,
    async reset(resetOptions) {
      const done = next('reset');
      child.send({ type: 'reset', retryAfterSeconds: resetOptions?.retryAfterSeconds });
      await done;
    },
    async stats() {
      const done = next('stats');
      child.send({ type: 'stats' });
      return (await done).stats as SlotStats;
    },
    close: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.send({ type: 'close' });
      }),
  };
}
