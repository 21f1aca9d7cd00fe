import type { HerdStrategy } from '../src/sim/herd-run.js';

/**
 * A herd strategy that cheats the other way from `fixedRateStrategy`: it knows how many
 * requests the callee holds at once (a worker pool's workers, plus its waiting places) and
 * keeps exactly that many in flight. A rejected caller waits in one line; each answer, served
 * or rejected, lets the next in line go at that instant. Against a pool nothing it sends after
 * the first tries is turned away, and no client can learn when a worker frees sooner than its
 * answer says so: the best a client that spends no request on guessing achieves there, the
 * yardstick for a pool whose service times spread (bench/herd-best-fixed-rate.ts).
 */
export function toldWindowStrategy(limit: number): HerdStrategy {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`a window must be a whole number ≥ 1, got ${limit}`);
  return {
    name: `window ${limit}`,
    description: `${limit} requests in flight, each answer lets the next waiting caller go, known in advance`,
    random: false,
    create(_sim, _setup, wire) {
      const attempts = new Map<number, number>();
      const line: number[] = [];
      let head = 0;
      let inFlight = 0;
      const send = (client: number, now: number): void => {
        const attempt = (attempts.get(client) ?? 0) + 1;
        attempts.set(client, attempt);
        inFlight++;
        wire.send(client, attempt, now);
      };
      const next = (now: number): void => {
        while (inFlight < limit && head < line.length) send(line[head++] as number, now);
      };
      return {
        // First tries go when their callers arrive, whatever is in flight: nobody holds them.
        start: send,
        served(_client, now) {
          inFlight--;
          next(now);
        },
        rejected(client, now) {
          inFlight--;
          line.push(client);
          next(now);
        },
      };
    },
  };
}
