// A limiter server of limiter-servers.ts in a process of its own, as a callee really is: its
// event loop then shares nothing with the herd's (in the herd's process, 100 callers' sends and
// answers delay the limiter's timers, and the limiter's work delays the callers' reads).
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Arrival } from './limiter-servers.js';

type Counts = { total: number; served: number; rejected: number };

/** Like `LimitedServer`, but every read goes over IPC. */
export interface LimiterProcess {
  url: string;
  requests(): Promise<Counts>;
  /** The concurrency server only (else empty): see `LimitedServer.serviceTimes`. */
  serviceTimes(): Promise<number[]>;
  /** See `LimitedServer.arrivals` (times on the limiter process's clock). */
  arrivals(): Promise<Arrival[]>;
  resetCounts(): Promise<void>;
  close(): Promise<void>;
}

export async function startLimiterProcess(
  kind: 'token-bucket' | 'fixed-window' | 'concurrency' | 'gcra',
  options: object,
): Promise<LimiterProcess> {
  const child = fork(fileURLToPath(new URL('./limiter-process-child.ts', import.meta.url)), [kind, JSON.stringify(options)], {
    execArgv: ['--import', 'tsx'],
  });
  const next = <T>(type: string) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (m: { type: string }) => {
        if (m.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(m as T);
      };
      const onExit = (code: number | null) => reject(new Error(`limiter process exited with code ${code}`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const { url } = await next<{ url: string }>('listening');
  const ask = async () => {
    const answer = next<{ requests: Counts; serviceTimes?: number[]; arrivals: Arrival[] }>('requests');
    child.send({ type: 'requests' });
    return answer;
  };
  return {
    url,
    requests: async () => (await ask()).requests,
    serviceTimes: async () => (await ask()).serviceTimes ?? [],
    arrivals: async () => (await ask()).arrivals,
    async resetCounts() {
      const done = next('reset');
      child.send({ type: 'reset' });
      await done;
    },
    close: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.send({ type: 'close' });
      }),
  };
}
