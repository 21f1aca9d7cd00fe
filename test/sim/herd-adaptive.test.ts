import { describe, expect, it } from 'vitest';
import type { LatencyDistribution } from '../../src/sim/distributions.js';
import { ADAPTIVE_HERD_STRATEGY } from '../../src/sim/herd-adaptive.js';
import { type HerdSetup, herdLowerBound, herdSpreadLowerBound, runHerd } from '../../src/sim/herd-run.js';
import type { ServerModel } from '../../src/sim/models/index.js';

/** The standard herd (100 callers, 100 requests/s) on one server model, latency 1 ms. */
function herdOn(
  model: ServerModel,
  options: { latencyMs?: number; arrivalMs?: number; distribution?: LatencyDistribution; seed?: number; queue?: number } = {},
): HerdSetup {
  return {
    clients: 100,
    capacity: 10,
    slotMs: 100,
    seed: options.seed ?? 1,
    server: {
      model,
      latencyMs: options.latencyMs ?? 1,
      distribution: options.distribution ?? 'constant',
      ...(options.queue === undefined ? {} : { queue: options.queue }),
    },
    arrivalMs: options.arrivalMs ?? 0,
  };
}

function ratios(setup: HerdSetup): { requests: number; time: number } {
  const run = runHerd(setup, ADAPTIVE_HERD_STRATEGY);
  const bound = herdLowerBound(setup);
  expect(run.gaveUp).toBe(0);
  return { requests: run.totalRequests / bound.totalRequests, time: run.allSucceededMs / bound.allSucceededMs };
}

/** One herd's requests and time over the bound for its own arrivals (first tries spread over `arrivalMs`); none gave up. */
function spreadRatios(setup: HerdSetup): { requests: number; time: number } {
  const run = runHerd(setup, ADAPTIVE_HERD_STRATEGY);
  const bound = herdSpreadLowerBound(setup, 1);
  expect(run.gaveUp).toBe(0);
  return { requests: run.totalRequests / bound.totalRequests, time: run.allSucceededMs / bound.allSucceededMs };
}

/** Seeds 1–24 of `options`' herd: each herd's requests and time over the bound for its own arrivals. */
function spreadHerds(model: ServerModel, options: Parameters<typeof herdOn>[1]): { requests: number[]; times: number[] } {
  const requests: number[] = [];
  const times: number[] = [];
  for (let seed = 1; seed <= 24; seed++) {
    const { requests: r, time } = spreadRatios(herdOn(model, { ...options, seed }));
    requests.push(r);
    times.push(time);
  }
  return { requests, times };
}

/** Seeds 1–24 of a fixed window's herd whose first tries spread over `arrivalMs` across lognormal 20 ms latencies. */
function spreadFixedWindowHerds(arrivalMs: number): { requests: number[]; times: number[] } {
  return spreadHerds('fixed-window', { arrivalMs, latencyMs: 20, distribution: 'lognormal' });
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/** One herd's time over the bound for its own arrivals (first tries spread over `arrivalMs`); none gave up. */
function timeOverSpreadBound(setup: HerdSetup): number {
  return spreadRatios(setup).time;
}

/** One herd: ≤ 1.1× the bound's requests and ≤ `time` × its time. */
function oneHerdWithin(setup: HerdSetup, time: number): void {
  const run = ratios(setup);
  expect(run.requests).toBeLessThanOrEqual(1.1);
  expect(run.time).toBeLessThanOrEqual(time);
}

describe('adaptive pacing on every server model', () => {
  it('a fixed window: ≤ 1.1× the bound’s requests and ≤ 1.05× its time (regression: 2.1×, then 1.21×, then 1.13× the time)', () => {
    // Before, start-up from the probes' low guess sent late (callers slept through the growing
    // rate), the first overshoot cut to what the slow ramp had delivered (55/s against 100/s)
    // and CUBIC took the rest of the herd to climb back: 203 requests, 1.90 s (bound 0.90 s).
    // Then 201 requests, 1.09 s (1.21×): the first window after the search served 3 of its 10.
    // Then, counting what the callee restored after the bracketed probe: 203, 1.07 s. Measured
    // now, the reprobes for the window's reopening evenly spaced: 205, 1.02 s. Then paced
    // evenly in every window (its last ten over 90 ms): 206, 1.02 s. Now each window's count goes
    // at once when its opener is served, the opener when the window should have ended: 206, 0.92 s.
    const { requests, time } = ratios(herdOn('fixed-window'));
    expect(requests).toBeLessThanOrEqual(1.1);
    expect(time).toBeLessThanOrEqual(1.05);
  });

  it('a fixed window with first tries spread over 10 ms or answers after 5 ms: ≤ 1.1× requests, ≤ 1.35× time (was 2.0–2.6×, then 1.29–1.45×)', () => {
    for (const options of [{ arrivalMs: 10 }, { latencyMs: 5 }, { latencyMs: 5, arrivalMs: 10 }]) {
      const { requests, time } = ratios(herdOn('fixed-window', options));
      expect(requests, JSON.stringify(options)).toBeLessThanOrEqual(1.1);
      expect(time, JSON.stringify(options)).toBeLessThanOrEqual(1.35);
    }
  });

  it('a fixed window answering after 20 ms: ≤ 1.1× requests and ≤ 1.15× time on 24 seeds (regression: 1.46×: no count, start-up from a floor)', () => {
    // Nine more requests one round trip apart took longer than the bracket allowed, so the
    // window was never counted: start-up from the bracket's guess served 2 of the next window's
    // 10 and took three windows to reach the rate. Now the count goes pipelined and the window
    // is paced by windows: 199 requests, 1.01 s (1.102× the bound). The reprobes sent after the
    // one that confirmed the window, before its answer, are counted in it: otherwise the
    // eleventh is rejected and pacing by rate resumes (1.24×).
    for (let seed = 1; seed <= 24; seed++) {
      const { requests, time } = ratios(herdOn('fixed-window', { latencyMs: 20, seed }));
      expect(requests, `seed ${seed}`).toBeLessThanOrEqual(1.1);
      expect(time, `seed ${seed}`).toBeLessThanOrEqual(1.15);
    }
  });

  it('a fixed window answering after 5 ms lognormal, herd over 3 ms: ≤ 1.1× requests on each of 24 seeds and ≤ 1.085× the time on average (was 1.163×, two seeds over 1.1× the requests; then 1.089×)', () => {
    // The probe that ended the search was answered late; parked callers looked again only a
    // quarter of the way to the next probe, so the count started ~30 ms late, ran out of time
    // and left start-up to grow from a floor. Now they look every round trip of the path while
    // a probe's answer is late: 1.093× on average. A count that started one at a time, on a
    // probe answered fast, and whose next answers came back slower, ran out of time too: its
    // rest now goes pipelined (`Pacer.pipeRest`), 1.089 → 1.078×.
    let sum = 0;
    for (let seed = 1; seed <= 24; seed++) {
      const { requests, time } = ratios(herdOn('fixed-window', { latencyMs: 5, distribution: 'lognormal', arrivalMs: 3, seed }));
      expect(requests, `seed ${seed}`).toBeLessThanOrEqual(1.1);
      sum += time;
    }
    expect(sum / 24).toBeLessThanOrEqual(1.085);
  });

  it('latencies that spread widely (exponential 2 ms, normal 10 ms, herd over 3 ms): ≤ 1.1× the requests on 8 seeds (regression: up to 3.5×)', () => {
    // The flight's first answers read as a slow flight — a success several times slower than
    // the one or two rejections back — and the search ended at 1,000–13,000/s: 400–670
    // requests on the fixed window, 250–290 on the buckets, and ~23 cuts of β to come down.
    for (const model of ['fixed-window', 'token-bucket', 'gcra'] as const) {
      for (const latency of [
        { latencyMs: 2, distribution: 'exponential' },
        { latencyMs: 10, distribution: 'normal' },
      ] as const) {
        for (let seed = 1; seed <= 8; seed++) {
          const { requests, time } = ratios(herdOn(model, { ...latency, arrivalMs: 3, seed }));
          expect(requests, `${model} ${latency.distribution} seed ${seed}`).toBeLessThanOrEqual(1.1);
          expect(time, `${model} ${latency.distribution} seed ${seed}`).toBeLessThanOrEqual(1.45);
        }
      }
    }
  });

  it('the bucket models and the concurrency limit: ≤ 1.1× requests and ≤ 1.2× time', () => {
    for (const model of ['token-bucket', 'leaky-bucket', 'gcra', 'concurrency'] as const) {
      for (const options of [{}, { arrivalMs: 10 }, { latencyMs: 5 }, { latencyMs: 5, arrivalMs: 10 }]) {
        const { requests, time } = ratios(herdOn(model, options));
        expect(requests, `${model} ${JSON.stringify(options)}`).toBeLessThanOrEqual(1.1);
        expect(time, `${model} ${JSON.stringify(options)}`).toBeLessThanOrEqual(1.2);
      }
    }
  });

  it('a worker pool whose latencies have a long tail (lognormal 20 ms, herd over 10 ms): ≤ 1.1× requests, ≤ 1.23× time on average and no herd over 1.45× on 24 seeds (was 1.240× and 1.55×)', () => {
    // One rejection from the tail (94 ms, seed 7) outlasted the flight's successes, so the
    // search read no slow flight, and a probe served meanwhile ended it: paced by rate from the
    // probe's guess, two herds took 1.49× and 1.55× the bound. The flight's answers read after
    // the search now find the pool by their medians (`Pacer.slowFlightFoundLate`).
    let sum = 0;
    for (let seed = 1; seed <= 24; seed++) {
      const { requests, time } = ratios(
        herdOn('concurrency', { latencyMs: 20, distribution: 'lognormal', arrivalMs: 10, seed, queue: 1 }),
      );
      expect(requests, `seed ${seed}`).toBeLessThanOrEqual(1.1);
      expect(time, `seed ${seed}`).toBeLessThanOrEqual(1.45);
      sum += time;
    }
    expect(sum / 24).toBeLessThanOrEqual(1.23);
  });

  it('a worker pool whose answers take 20 ms back: ≤ 1.05× requests and ≤ 1.15× the time (was 1.172×: each worker idled while an answer travelled back)', () => {
    // 10 workers of 100 ms, queue 1: sent only as answers come back, each worker waits ~20 ms
    // for its next request. The window now sends one request ahead of an answer once a request
    // in flight has had one service time (the successes' round trip less the rejections'), so
    // it reaches the worker as it frees: 1.149×.
    const { requests, time } = ratios(herdOn('concurrency', { latencyMs: 20, seed: 1, queue: 1 }));
    expect(requests).toBeLessThanOrEqual(1.05);
    expect(time).toBeLessThanOrEqual(1.15);
  });

  it('a worker pool whose service times and latencies spread (lognormal 5 ms, normal 10 ms): ≤ 1.1× requests, ≤ 1.15× time on average and no herd over 1.35× on 24 seeds (was 1.38–1.43× on average)', () => {
    // Paced at a rate, a pool whose service times spread finds every worker busy after a run
    // of slow ones and idle ones after a run of fast ones: even the pool's true rate, known in
    // advance, took 1.16–1.19× the bound. Requests now go as the pool's places free up
    // (`PoolWindow`): 1.12× and 1.14× on average over these seeds. Before the window, a cut on
    // the first few paced successes after the slow flight once took what they read (23/s of
    // 100/s) as the callee's rate, and CUBIC took 3 s to climb back (3.1–3.3 s herds).
    for (const latency of [
      { latencyMs: 5, distribution: 'lognormal' },
      { latencyMs: 10, distribution: 'normal' },
    ] as const) {
      let sum = 0;
      for (let seed = 1; seed <= 24; seed++) {
        const { requests, time } = ratios(herdOn('concurrency', { ...latency, arrivalMs: 3, seed, queue: 1 }));
        expect(requests, `${latency.distribution} seed ${seed}`).toBeLessThanOrEqual(1.1);
        expect(time, `${latency.distribution} seed ${seed}`).toBeLessThanOrEqual(1.35);
        sum += time;
      }
      expect(sum / 24, latency.distribution).toBeLessThanOrEqual(1.15);
    }
  });

  it('a fixed window whose latencies spread (normal 10 ms, lognormal 20 ms, herd over 3 or 10 ms): ≤ 1.1× requests, and on average over 24 seeds ≤ 1.095× and ≤ 1.17× the time (was 1.30× and 1.37×, then 1.12×, 1.20× and 1.21×, then 1.102× with normal 10 ms)', () => {
    // Start-up from a count's floor sends below the window's rate, so windows expire half-used:
    // a saturation reading taken from the reprobe's reopening read 82/s of 100/s, and the herd
    // cruised there. Callers parked during the reprobes slept through the rate set at the
    // reopening, and sent at 84/s while 130/s was allowed. Then: answers out of order let the
    // first window take one request too many (a reprobe sent before its opener not counted, or
    // one due on the new rate let go besides the count), and a free place left in a window was
    // taken by the next opener, read as the window reopening early. And the search's count,
    // started one at a time on a probe answered in 4.9 ms, counted four by the bracket's end
    // when the next answers took 12–21 ms (normal 10 ms, seed 16: 1.245×); its rest now goes
    // pipelined (`Pacer.pipeRest`).
    for (const [latency, arrivalMs, limit] of [
      [{ latencyMs: 10, distribution: 'normal' }, 3, 1.095],
      [{ latencyMs: 20, distribution: 'lognormal' }, 3, 1.17],
      [{ latencyMs: 20, distribution: 'lognormal' }, 10, 1.17],
    ] as const) {
      const name = `${latency.distribution}, herd over ${arrivalMs} ms`;
      let sum = 0;
      for (let seed = 1; seed <= 24; seed++) {
        const { requests, time } = ratios(herdOn('fixed-window', { ...latency, arrivalMs, seed }));
        expect(requests, `${name}, seed ${seed}`).toBeLessThanOrEqual(1.1);
        sum += time;
      }
      expect(sum / 24, name).toBeLessThanOrEqual(limit);
    }
  });

  it('a served probe answered too late to count the window it found has the count made from its answer: fixed window, normal 40 ms latencies, first tries together, 24 seeds, ≤ 1.23× the time and ≤ 1.08× the requests on average, seed 1 ≤ 1.25× (were 1.267×, and 1.55×: start-up from 1 / l, 15/s, for ~400 ms)', () => {
    const times: number[] = [];
    const requests: number[] = [];
    for (let seed = 1; seed <= 24; seed++) {
      const run = ratios(herdOn('fixed-window', { latencyMs: 40, distribution: 'normal', seed }));
      times.push(run.time);
      requests.push(run.requests);
    }
    expect(times[0]).toBeLessThanOrEqual(1.25);
    expect(mean(times)).toBeLessThanOrEqual(1.23);
    expect(mean(requests)).toBeLessThanOrEqual(1.08);
  });

  it('a count made from a late answer sends no more than the window the probe opened holds: fixed window, normal 40 ms, first tries together, seed 18 ≤ 1.25× the time, 24 seeds ≤ 1.2× on average (were 1.58× and 1.213×: a probe due since the served one went besides the count, the eleventh was rejected first, and start-up went on from 16/s)', () => {
    const times: number[] = [];
    for (let seed = 1; seed <= 24; seed++) {
      const run = ratios(herdOn('fixed-window', { latencyMs: 40, distribution: 'normal', seed }));
      times.push(run.time);
      if (seed === 18) expect(run.time, 'seed 18').toBeLessThanOrEqual(1.25);
    }
    expect(mean(times)).toBeLessThanOrEqual(1.2);
  });

  it('an opener answered after one sent behind it brings the next opener forward to its own window: fixed window, normal 40 ms and exponential 20 ms, first tries together, 24 seeds each, ≤ 1.17× the time and ≤ 1.08× the requests on average, normal 40 ms seed 2 ≤ 1.12× (were 1.197×, 1.186× and 1.171×: the next opener stayed due a whole bracket after the later request, 40 ms after the window ended)', () => {
    for (const latency of [
      { latencyMs: 40, distribution: 'normal' },
      { latencyMs: 20, distribution: 'exponential' },
    ] as const) {
      const times: number[] = [];
      const requests: number[] = [];
      for (let seed = 1; seed <= 24; seed++) {
        const run = ratios(herdOn('fixed-window', { ...latency, seed }));
        times.push(run.time);
        requests.push(run.requests);
      }
      if (latency.distribution === 'normal') expect(times[1], 'normal 40 ms, seed 2').toBeLessThanOrEqual(1.12);
      expect(mean(times), latency.distribution).toBeLessThanOrEqual(1.17);
      expect(mean(requests), latency.distribution).toBeLessThanOrEqual(1.08);
    }
  });

  it('a span that begins after a pause in sending is read from its opener: fixed window, first tries over 200 ms, 5 ms latencies, seeds 5 and 21 ≤ 1.35× the time and 24 seeds ≤ 1.2× on average; exponential 20 ms seed 17 ≤ 1.25× (were 1.63×, 1.61×, 1.214× and 1.37×: half the pause before the opener read into the window, 62/s of its 100/s)', () => {
    const times: number[] = [];
    for (let seed = 1; seed <= 24; seed++) {
      const time = timeOverSpreadBound(herdOn('fixed-window', { latencyMs: 5, arrivalMs: 200, seed }));
      times.push(time);
      if (seed === 5 || seed === 21) expect(time, `5 ms, seed ${seed}`).toBeLessThanOrEqual(1.35);
    }
    expect(mean(times)).toBeLessThanOrEqual(1.2);
    const exponential = herdOn('fixed-window', { latencyMs: 20, distribution: 'exponential', arrivalMs: 200, seed: 17 });
    expect(timeOverSpreadBound(exponential), 'exponential 20 ms, seed 17').toBeLessThanOrEqual(1.25);
  });

  it('the reopening right after a cut to an older reading replaces it: token bucket, 5 ms, first tries over 100 ms, 24 seeds, ≤ 1.03× the time on average and none over 1.06×, ≤ 1.08× the requests on average (were 1.044× and 1.146×: cut to 78/s read over 4 successes 200 ms before, the herd climbed from there)', () => {
    const { times, requests } = spreadHerds('token-bucket', { latencyMs: 5, arrivalMs: 100 });
    expect(Math.max(...times)).toBeLessThanOrEqual(1.06);
    expect(mean(times)).toBeLessThanOrEqual(1.03);
    expect(mean(requests)).toBeLessThanOrEqual(1.08);
  });

  it('a window count that first tries filled is put to the test once pacing leaves windows for the rate: fixed window, normal 40 ms, first tries over 200 ms, seed 24 ≤ 1.6× the time, 24 seeds ≤ 1.29× on average (were 2.32× and 1.317×: a count of 4 of the window’s 10 paced the herd at 33/s to its end)', () => {
    const times: number[] = [];
    for (let seed = 1; seed <= 24; seed++)
      times.push(timeOverSpreadBound(herdOn('fixed-window', { latencyMs: 40, distribution: 'normal', arrivalMs: 200, seed })));
    expect(times[23], 'seed 24').toBeLessThanOrEqual(1.6);
    expect(mean(times)).toBeLessThanOrEqual(1.29);
  });

  it('callers parked while a level that may be low is on trial check again as often as in start-up: fixed window, normal 40 ms, first tries over 200 ms, seed 24 ≤ 1.42× the time; token bucket, normal 10 ms, first tries over 500 ms, seed 2 ≤ 1.1× (were 1.56× and 1.31×: parked half their waits at the trial’s low rate, callers slept up to 900 ms past slots that start-up had moved up)', () => {
    const window = herdOn('fixed-window', { latencyMs: 40, distribution: 'normal', arrivalMs: 200, seed: 24 });
    expect(timeOverSpreadBound(window), 'fixed window, seed 24').toBeLessThanOrEqual(1.42);
    const bucket = herdOn('token-bucket', { latencyMs: 10, distribution: 'normal', arrivalMs: 500, seed: 2 });
    expect(timeOverSpreadBound(bucket), 'token bucket, seed 2').toBeLessThanOrEqual(1.1);
  });

  it('a cut does not take the peak of a few paced successes as the callee’s rate (token bucket, exponential 2 ms, seed 7: ≤ 1.05× the time; trusting it took 1.25×)', () => {
    oneHerdWithin(herdOn('token-bucket', { latencyMs: 2, distribution: 'exponential', arrivalMs: 3, seed: 7 }), 1.05);
  });

  it('a worker pool whose latencies spread, every first try sent at t = 0: ≤ 1.1× requests on every one of 24 seeds, ≤ 1.15× time on average (was up to 1.82× requests, 1.43× time on average)', () => {
    // Some rejections came back at once (normal latencies clipped at 0), so the search began at
    // the instant the flight left, and the flight's own successes read as sent after it: no
    // slow flight, and the herd was paced from a probe's guess.
    let sum = 0;
    for (let seed = 1; seed <= 24; seed++) {
      const { requests, time } = ratios(herdOn('concurrency', { latencyMs: 10, distribution: 'normal', seed, queue: 1 }));
      expect(requests, `seed ${seed}`).toBeLessThanOrEqual(1.1);
      sum += time;
    }
    expect(sum / 24).toBeLessThanOrEqual(1.15);
  });

  it('a token bucket whose answers come back out of order (lognormal 20 ms, seed 13): ≤ 1.15× the time (was 1.50×: the rate between two reopenings read 62/s of 100/s)', () => {
    oneHerdWithin(herdOn('token-bucket', { latencyMs: 20, distribution: 'lognormal', arrivalMs: 3, seed: 13 }), 1.15);
  });

  it('a token bucket in front of a slow backend (rejections after 5 ms) reads as a pool of its burst: every caller served, ≤ 1.15× requests, ≤ 1.6× time on average with successes after 200 ms (paced by rate: 1.68×)', () => {
    // The flight is served slowly and rejected fast, as a worker pool's is: the window of the
    // burst starts up until the limiter rejects. With successes after 50 ms that window sends
    // at twice the limiter's rate until rejections take its places back (1.12× the requests on
    // average, against 1.04× paced by rate).
    for (const latencyMs of [50, 200]) {
      let sum = 0;
      for (let seed = 1; seed <= 6; seed++) {
        const { requests, time } = ratios({
          ...herdOn('token-bucket'),
          seed,
          server: { model: 'token-bucket', latencyMs, rejectLatencyMs: 5, distribution: 'lognormal' },
          arrivalMs: 3,
        });
        expect(requests, `${latencyMs} ms seed ${seed}`).toBeLessThanOrEqual(1.15);
        sum += time;
      }
      if (latencyMs === 200) expect(sum / 6).toBeLessThanOrEqual(1.6);
    }
  });

  it('a concurrency limit whose service times vary ±5 %: ≤ 1.1× requests and ≤ 1.1× time on 20 seeds (regression: up to 4.2 s)', () => {
    // The slow flight's answers no longer arrive at one instant: the search ended at the first
    // (10.9/s), the level rose to ~100/s over the next 17 ms, and callers far back in the
    // queue had slept half of a wait computed at 10.9/s — seconds. Before: median 1.65 s,
    // 1.12–4.25 s over these seeds (bound 1.0 s); then, paced at the learned rate, 1.14 s
    // (1.12–1.21); now, as the pool's places free up, at most 1.07 s.
    for (let seed = 1; seed <= 20; seed++) {
      const setup: HerdSetup = {
        ...herdOn('concurrency'),
        seed,
        server: { model: 'concurrency', queue: 1, service: { ms: 100, distribution: 'normal', sigma: 0.05 } },
      };
      const { requests, time } = ratios(setup);
      expect(requests, `seed ${seed}`).toBeLessThanOrEqual(1.1);
      expect(time, `seed ${seed}`).toBeLessThanOrEqual(1.1);
    }
  });

  it('a fixed window whose herd arrives over 120 or 200 ms, more than a window: ≤ 1.1× requests and ≤ 1.2× time on each of 24 seeds (was 1.32–1.36× at the median, up to 4.35×)', () => {
    // The window reopened among the first tries, while the search's probes, doubling their gaps,
    // found the next reopening late; a ramp's cut then held start-up at 21/s for good. The run
    // of first tries served after the reopening is now the window's count, and the pacer
    // cruises at it.
    for (const arrivalMs of [120, 200]) {
      for (let seed = 1; seed <= 24; seed++) {
        const { requests, time } = ratios(herdOn('fixed-window', { arrivalMs, seed }));
        expect(requests, `${arrivalMs} ms, seed ${seed}`).toBeLessThanOrEqual(1.1);
        expect(time, `${arrivalMs} ms, seed ${seed}`).toBeLessThanOrEqual(1.2);
      }
    }
  });

  it('a fixed window whose first tries arrive over 500 ms, twice its rate: on average over 24 seeds ≤ 1.10× the requests and ≤ 1.13× the time, no herd over 1.17× the requests (was 1.123×, 1.160× and 1.21×: counts and windows went into windows first tries filled)', () => {
    let requests = 0;
    let time = 0;
    for (let seed = 1; seed <= 24; seed++) {
      const setup = herdOn('fixed-window', { arrivalMs: 500, seed });
      const run = runHerd(setup, ADAPTIVE_HERD_STRATEGY);
      const bound = herdSpreadLowerBound(setup, 1);
      expect(run.gaveUp).toBe(0);
      expect(run.totalRequests / bound.totalRequests, `seed ${seed}`).toBeLessThanOrEqual(1.17);
      requests += run.totalRequests / bound.totalRequests;
      time += run.allSucceededMs / bound.allSucceededMs;
    }
    console.log(
      `[figure] fixed window, first tries over 500 ms: mean ${(requests / 24).toFixed(3)}× the requests, ${(time / 24).toFixed(3)}× the time`,
    );
    expect(requests / 24).toBeLessThanOrEqual(1.1);
    expect(time / 24).toBeLessThanOrEqual(1.13);
  });

  it('a token bucket whose first tries arrive over 200 or 500 ms across lognormal 20 ms: on average over 24 seeds ≤ 1.06× the requests and ≤ 1.1× the time (was 1.067× and 1.071× the requests: the search counted its window while first tries were filling it)', () => {
    for (const arrivalMs of [200, 500]) {
      let requests = 0;
      let time = 0;
      for (let seed = 1; seed <= 24; seed++) {
        const setup = herdOn('token-bucket', { arrivalMs, latencyMs: 20, distribution: 'lognormal', seed });
        const run = runHerd(setup, ADAPTIVE_HERD_STRATEGY);
        const bound = herdSpreadLowerBound(setup, 1);
        expect(run.gaveUp).toBe(0);
        requests += run.totalRequests / bound.totalRequests;
        time += run.allSucceededMs / bound.allSucceededMs;
      }
      console.log(
        `[figure] token bucket, lognormal 20 ms, first tries over ${arrivalMs} ms: mean ${(requests / 24).toFixed(3)}× the requests, ${(time / 24).toFixed(3)}× the time`,
      );
      expect(requests / 24, `${arrivalMs} ms`).toBeLessThanOrEqual(1.06);
      expect(time / 24, `${arrivalMs} ms`).toBeLessThanOrEqual(1.1);
    }
  });

  it('a span read among a crowd of first tries sets the level at the top of its error: token bucket, 20 ms, first tries over 200 ms, 24 seeds, ≤ 1.12× the time on average and seed 11 ≤ 1.05× (were 1.145× and 1.238×: 4 successes among 32 first tries read 70/s of 100/s, and the herd stayed near it)', () => {
    const { requests, times } = spreadHerds('token-bucket', { latencyMs: 20, arrivalMs: 200 });
    console.log(
      `[figure] token bucket, 20 ms, first tries over 200 ms: mean ${mean(requests).toFixed(3)}× the requests, ${mean(times).toFixed(3)}× the time`,
    );
    for (const [i, r] of requests.entries()) expect(r, `seed ${i + 1}`).toBeLessThanOrEqual(1.13);
    expect(mean(requests)).toBeLessThanOrEqual(1.06);
    expect(mean(times)).toBeLessThanOrEqual(1.12);
    expect(times[11 - 1], 'seed 11').toBeLessThanOrEqual(1.05);
  });

  it('a run of first tries cut short below four served waits for what was sent before the rejected one: fixed window, first tries over 200 ms, lognormal 20 ms, 24 seeds, ≤ 1.22× the time on average, none over 1.32×, seeds 15, 19 and 23 ≤ 1.21× (were 1.244×, 1.47×, and 1.30, 1.38, 1.47×)', () => {
    // A later first try's rejection overtook the window's other successes; the run, ended there
    // with too few counted to read, left the search to probes whose gaps had doubled.
    const { requests, times } = spreadFixedWindowHerds(200);
    for (const [i, r] of requests.entries()) expect(r, `seed ${i + 1}`).toBeLessThanOrEqual(1.1);
    console.log(
      `[figure] fixed window, lognormal 20 ms, first tries over 200 ms: herds ${times.map((t) => t.toFixed(2)).join(' ')}× the bound's time`,
    );
    expect(mean(times)).toBeLessThanOrEqual(1.22);
    expect(Math.max(...times)).toBeLessThanOrEqual(1.32);
    for (const seed of [15, 19, 23]) expect(times[seed - 1], `seed ${seed}`).toBeLessThanOrEqual(1.21);
  });

  it('a run that counted four or more before a rejection cut it counts the successes of its window that come back after: fixed window, first tries over 200 ms, lognormal 20 ms, 24 seeds, ≤ 1.2× the time and ≤ 1.06× the requests on average, seeds 1, 3 and 5 ≤ 1.23× (were 1.217×, 1.067×; 1.31, 1.30, 1.31×)', () => {
    // Seed 1: the run read 5 of its window's 10 (47/s); the other five, sent before the
    // rejection that cut it, came back within 30 ms of the reading and were not counted.
    const { requests, times } = spreadFixedWindowHerds(200);
    expect(mean(times)).toBeLessThanOrEqual(1.2);
    expect(mean(requests)).toBeLessThanOrEqual(1.06);
    for (const seed of [1, 3, 5]) expect(times[seed - 1], `seed ${seed}`).toBeLessThanOrEqual(1.23);
  });

  it('one late first try in the tail of lognormal latencies is no slow flight: fixed window, first tries over 500 ms, lognormal 20 ms, 24 seeds, none over 1.25× the time, ≤ 1.17× on average (were 1.48× at seed 2, 1.178×)', () => {
    // Seed 2: a first try sent 60 ms into the search came back in 62.7 ms, over twice the
    // slowest rejection, and the window was taken for a worker pool at 194/s.
    const { requests, times } = spreadFixedWindowHerds(500);
    for (const [i, r] of requests.entries()) expect(r, `seed ${i + 1}`).toBeLessThanOrEqual(1.1);
    for (const [i, t] of times.entries()) expect(t, `seed ${i + 1}`).toBeLessThanOrEqual(1.25);
    expect(mean(times)).toBeLessThanOrEqual(1.17);
  });

  it('buckets whose herd arrives over 120 or 200 ms: ≤ 1.1× the time on average over 24 seeds and no herd over 1.8× (was 1.45–1.70× on average, up to 6.6×)', () => {
    // Each first try rejected while the pacer cruised cut its rate, down to 6/s.
    for (const model of ['token-bucket', 'gcra'] as const) {
      for (const arrivalMs of [120, 200]) {
        let requestSum = 0;
        let timeSum = 0;
        for (let seed = 1; seed <= 24; seed++) {
          const { requests, time } = ratios(herdOn(model, { arrivalMs, seed }));
          expect(time, `${model} ${arrivalMs} ms, seed ${seed}`).toBeLessThanOrEqual(1.8);
          requestSum += requests;
          timeSum += time;
        }
        expect(requestSum / 24, `${model} ${arrivalMs} ms`).toBeLessThanOrEqual(1.05);
        expect(timeSum / 24, `${model} ${arrivalMs} ms`).toBeLessThanOrEqual(1.1);
      }
    }
  });

  it('a worker pool whose herd arrives over 120 or 200 ms, more than a service time: ≤ 1.1× requests and ≤ 1.2× time on each of 24 seeds (was 1.77×)', () => {
    // The first tries served slowly while later ones were still being rejected fast did not
    // count as the flight: the search ended on a probe, and start-up from its guess sent one
    // request per service time at first.
    for (const arrivalMs of [120, 200]) {
      for (let seed = 1; seed <= 24; seed++) {
        const { requests, time } = ratios(herdOn('concurrency', { arrivalMs, seed, queue: 1 }));
        expect(requests, `${arrivalMs} ms, seed ${seed}`).toBeLessThanOrEqual(1.1);
        expect(time, `${arrivalMs} ms, seed ${seed}`).toBeLessThanOrEqual(1.2);
      }
    }
  });
});

describe('adaptive pacing against a worker pool with no waiting place, first tries arriving for longer than a service time', () => {
  // 5, 10 or 20 workers of 100 ms, 50 or 100 callers whose first tries arrive over 200 or
  // 300 ms, answers after a constant 1, 5 or 20 ms; eight seeds each, against the bound for
  // those arrivals. Three faults made up to 2.9× the bound's time: the slow flight was read
  // only at an answer, and none came once the first tries stopped (the search ended on a
  // probe, and start-up crept up from its guess, one request per service time); the window
  // made at the search's end sent into a pool its last first tries still held, and shrank on
  // the rejections; and a place it saw held by first tries was never freed when they had left
  // before the window was made (the window stuck at one or two of 20 places: 7.7×).
  function eachHerd(check: (r: { requests: number; time: number }, name: string) => void): void {
    for (const [capacity, clients] of [
      [5, 50],
      [10, 100],
      [20, 100],
    ] as const) {
      for (const latencyMs of [1, 5, 20]) {
        for (const arrivalMs of [200, 300]) {
          for (let seed = 1; seed <= 8; seed++) {
            const setup: HerdSetup = { ...herdOn('concurrency', { latencyMs, arrivalMs, seed }), capacity, clients };
            const run = runHerd(setup, ADAPTIVE_HERD_STRATEGY);
            const bound = herdSpreadLowerBound(setup, 1);
            expect(run.gaveUp).toBe(0);
            check(
              { requests: run.totalRequests / bound.totalRequests, time: run.allSucceededMs / bound.allSucceededMs },
              `${capacity} workers, ${latencyMs} ms, over ${arrivalMs} ms, seed ${seed}`,
            );
          }
        }
      }
    }
  }

  it('≤ 1.5× the time and ≤ 1.15× the requests on every herd; ≤ 1.25× and ≤ 1.1× on average', () => {
    // (The requests of a herd of 50 on five workers: 95 against a bound of 85 at worst.)
    let time = 0;
    let requests = 0;
    let n = 0;
    eachHerd((r, name) => {
      expect(r.requests, name).toBeLessThanOrEqual(1.15);
      expect(r.time, name).toBeLessThanOrEqual(1.5);
      time += r.time;
      requests += r.requests;
      n++;
    });
    console.log(
      `[figure] pool, no waiting place: mean ${(time / n).toFixed(3)}× the time, ${(requests / n).toFixed(3)}× the requests`,
    );
    expect(time / n).toBeLessThanOrEqual(1.25);
    expect(requests / n).toBeLessThanOrEqual(1.1);
  });

  it('service times and latencies that spread (lognormal 20 ms), first tries over 200 ms: ≤ 1.34× the time on average over 16 seeds and no herd over 1.52× (was 1.364× and 1.58×: the window sent into places first tries of the search still held)', () => {
    // A first try left at 150 ms may be in service until 400: the window counted only those of
    // the last service time as holding places, met two or three more, and the rejections took
    // two of its ten places for good.
    let time = 0;
    for (let seed = 1; seed <= 16; seed++) {
      const setup = herdOn('concurrency', { latencyMs: 20, distribution: 'lognormal', arrivalMs: 200, seed });
      const run = runHerd(setup, ADAPTIVE_HERD_STRATEGY);
      const bound = herdSpreadLowerBound(setup, 1);
      expect(run.gaveUp).toBe(0);
      expect(run.totalRequests / bound.totalRequests, `seed ${seed}`).toBeLessThanOrEqual(1.1);
      expect(run.allSucceededMs / bound.allSucceededMs, `seed ${seed}`).toBeLessThanOrEqual(1.52);
      time += run.allSucceededMs / bound.allSucceededMs;
    }
    console.log(`[figure] pool, lognormal 20 ms, over 200 ms: mean ${(time / 16).toFixed(3)}× the time`);
    expect(time / 16).toBeLessThanOrEqual(1.34);
  });

  it('a window made while a probe of the search is still in service counts its place, and goes as soon as the first tries have stopped: ≤ 1.23× the time on each of 16 seeds (was up to 1.30×, 1.28× on average)', () => {
    // Answers after 20 ms, first tries over 200 ms. The window was made ~30 ms after the last
    // first try was served, with one probe still in a worker: counted free, that place took an
    // eleventh request, rejected, and the rejection took a place back — nine workers of ten
    // kept busy until the window grew again, half a second later. And the window waited
    // another ~30 ms for the first tries of the last service time to stop holding places
    // (`othersRecent`), though none had arrived for 70 ms, while parked callers looked again
    // only a quarter of a probe's gap later than the search could end.
    for (let seed = 1; seed <= 16; seed++) {
      const setup = herdOn('concurrency', { latencyMs: 20, arrivalMs: 200, seed });
      const run = runHerd(setup, ADAPTIVE_HERD_STRATEGY);
      const bound = herdSpreadLowerBound(setup, 1);
      expect(run.gaveUp).toBe(0);
      expect(run.totalRequests / bound.totalRequests, `seed ${seed}`).toBeLessThanOrEqual(1.07);
      expect(run.allSucceededMs / bound.allSucceededMs, `seed ${seed}`).toBeLessThanOrEqual(1.23);
    }
  });

  it('the search reads the pool once every first try has been out as long as the slowest rejection took: ≤ 1.2× the time on each of 16 seeds, with no waiting place and with one (was up to 1.22× and 1.24×)', () => {
    // Answers after 20 ms, first tries over 200 ms: the last first try left at ~200 ms and its
    // rejection was back by ~220 ms, but the search waited for half of what a served first try
    // took beyond a rejection (~50 ms) before it read the slow flight, with the pool emptying.
    for (const queue of [0, 1]) {
      for (let seed = 1; seed <= 16; seed++) {
        const setup = herdOn('concurrency', { latencyMs: 20, arrivalMs: 200, seed, queue });
        const run = runHerd(setup, ADAPTIVE_HERD_STRATEGY);
        const bound = herdSpreadLowerBound(setup, 1);
        expect(run.gaveUp).toBe(0);
        expect(run.totalRequests / bound.totalRequests, `queue ${queue} seed ${seed}`).toBeLessThanOrEqual(1.07);
        expect(run.allSucceededMs / bound.allSucceededMs, `queue ${queue} seed ${seed}`).toBeLessThanOrEqual(1.2);
      }
    }
  });

  it('a pool found after the search ended on a served probe: the window counts from the first ticket of cruise, not the search’s probes (seed 76: ≤ 1.2× the time, was 1.41×; first tries together, exponential 20 ms, 16 seeds: mean ≤ 1.45×, was 1.68×)', () => {
    // A probe that met a worker freed early (service times that spread) ended the search at a
    // guess; the pool was read from the flight's answers a few ms later, and its window counted
    // its places from the search's first probe. Those probes were answered before cruise, so
    // their places were never freed: the window kept three of ten workers idle.
    oneHerdWithin(herdOn('concurrency', { latencyMs: 20, distribution: 'lognormal', arrivalMs: 200, seed: 76 }), 1.2);
    let time = 0;
    let requests = 0;
    for (let seed = 1; seed <= 16; seed++) {
      const setup = herdOn('concurrency', { latencyMs: 20, distribution: 'exponential', seed });
      const run = runHerd(setup, ADAPTIVE_HERD_STRATEGY);
      const bound = herdSpreadLowerBound(setup, 1);
      expect(run.gaveUp).toBe(0);
      requests += run.totalRequests / bound.totalRequests;
      time += run.allSucceededMs / bound.allSucceededMs;
    }
    // (Seed 8 takes 1.12× the requests, with this fix or without.)
    expect(requests / 16).toBeLessThanOrEqual(1.05);
    expect(time / 16).toBeLessThanOrEqual(1.45);
  });
});

describe('adaptive pacing after a run of first tries that a rejection cut short', () => {
  // Lognormal 20 ms latencies: a later first try's rejection comes back before the window's
  // other successes, the run counts a few of them and reads the callee low, and nothing is
  // rejected below the callee's rate to say so. Before the reading was put to the test: a fixed
  // window whose first tries arrived over 200 ms 1.34–2.20× the bound's time (mean 1.72), a
  // token bucket's over 500 ms up to 2.05×. Tested, but only after a climb of a second to the
  // reading's top, with the test forgotten at a cut back to it, and the pacer's own slow
  // sending counted in the next reading: 1.76× (mean 1.60) and 1.37×.
  function timeRatios(model: ServerModel, arrivalMs: number): number[] {
    const out: number[] = [];
    for (let seed = 1; seed <= 8; seed++) {
      const setup = herdOn(model, { latencyMs: 20, distribution: 'lognormal', arrivalMs, seed });
      const run = runHerd(setup, ADAPTIVE_HERD_STRATEGY);
      const bound = herdSpreadLowerBound(setup, 1);
      expect(run.gaveUp).toBe(0);
      expect(run.totalRequests / bound.totalRequests, `${model} seed ${seed}`).toBeLessThanOrEqual(1.12);
      out.push(run.allSucceededMs / bound.allSucceededMs);
    }
    return out;
  }

  it('a fixed window, first tries over 200 ms: ≤ 1.4× the time on each of 8 seeds, ≤ 1.3× on average (still over the 1.2× target)', () => {
    const times = timeRatios('fixed-window', 200);
    for (const t of times) expect(t).toBeLessThanOrEqual(1.4);
    expect(times.reduce((a, b) => a + b) / times.length).toBeLessThanOrEqual(1.3);
  });

  it('a token bucket, first tries over 500 ms: ≤ 1.15× the time on each of 8 seeds', () => {
    for (const t of timeRatios('token-bucket', 500)) expect(t).toBeLessThanOrEqual(1.15);
  });
});

describe('adaptive pacing against windows of a second or more, defaults only', () => {
  /** A fixed window of `capacity` per `slotMs`, first tries at t = 0 or over 200 ms, five seeds. */
  function eachSeed(
    capacity: number,
    slotMs: number,
    clients: number,
    check: (r: { requests: number; time: number }, name: string) => void,
  ): void {
    for (const arrivalMs of [0, 200]) {
      for (let seed = 1; seed <= 5; seed++) {
        const setup: HerdSetup = { clients, capacity, slotMs, seed, server: { model: 'fixed-window', latencyMs: 1 }, arrivalMs };
        check(ratios(setup), `${capacity} per ${slotMs} ms, ${clients} callers, over ${arrivalMs} ms, seed ${seed}`);
      }
    }
  }

  it('60 a minute, 10 per 10 s and 20 per 2 s: ≤ 1.15× the bound’s requests and ≤ 1.1× its time (regression: 10×, 6.2× and 1.86× the requests)', () => {
    // The flight's successes left the estimator's 500 ms window long before the first reopening,
    // so the count never ran and start-up from the probe's bracket sent ~25 a second into a
    // window that had served its 60; and the search probed once a second for the whole minute.
    // Most of what is left over the bound is the search's probes: 14 of the 28 extra requests
    // of 10 per 10 s go in its first second, while their gaps double from a tenth of a ms.
    for (const [capacity, slotMs, clients] of [
      [60, 60_000, 200],
      [10, 10_000, 100],
      [20, 2_000, 100],
    ] as const) {
      eachSeed(capacity, slotMs, clients, ({ requests, time }, name) => {
        expect(requests, name).toBeLessThanOrEqual(1.15);
        expect(time, name).toBeLessThanOrEqual(1.1);
      });
    }
  });

  it('100 a second, 300 callers: ≤ 1.1× requests and ≤ 1.15× time (regression: 1.29× and 2.14×)', () => {
    // Besides the count: reprobes for the second reopening went 1 / level apart across a
    // bracket of 655 ms (35 rejected), and the search's doubling gaps found the first
    // reopening 311 ms late.
    eachSeed(100, 1_000, 300, ({ requests, time }, name) => {
      expect(requests, name).toBeLessThanOrEqual(1.1);
      expect(time, name).toBeLessThanOrEqual(1.15);
    });
  });
});

describe('adaptive pacing against buckets that refill once a second, defaults only', () => {
  it('token bucket and GCRA, 10 per 10 s and 60 a minute: ≤ 1.2× the bound’s requests and ≤ 1.05× its time (regression: 1.46× and 1.36×)', () => {
    // CUBIC's climb back took recoveryMs (1 s) whatever the rate: past the rate once a token,
    // and one request rejected for each served.
    for (const model of ['token-bucket', 'gcra'] as const) {
      for (const [capacity, slotMs, clients] of [
        [10, 10_000, 100],
        [60, 60_000, 200],
      ] as const) {
        const name = `${model}, ${capacity} per ${slotMs} ms, ${clients} callers`;
        const { requests, time } = ratios({ clients, capacity, slotMs, seed: 1, server: { model, latencyMs: 1 } });
        expect(requests, name).toBeLessThanOrEqual(1.2);
        expect(time, name).toBeLessThanOrEqual(1.05);
      }
    }
  });

  it('a bucket of one token every 2 s, below the floor of one request a second: ≤ 1.6× the bound’s requests and ≤ 1.3× its time (regression: 1.80×, every other request rejected at the floor)', () => {
    for (const server of [
      { model: 'token-bucket', latencyMs: 1 },
      { model: 'gcra', latencyMs: 20, distribution: 'lognormal' },
    ] as const) {
      for (let seed = 1; seed <= 3; seed++) {
        const name = `${server.model}, seed ${seed}`;
        const { requests, time } = ratios({ clients: 30, capacity: 1, slotMs: 2_000, seed, server });
        expect(requests, name).toBeLessThanOrEqual(1.6);
        expect(time, name).toBeLessThanOrEqual(1.3);
      }
    }
  });
});

describe('adaptive pacing against worker pools whose service takes seconds, defaults only', () => {
  it('10 workers × 10 s and 5 workers × 5 s: ≤ 1.25× the bound’s requests and ≤ 1.1× its time (regression: 1.77× and 1.88×)', () => {
    // A place not freed for maxSpacingMs (1 s) was taken as lost, and a request went into the
    // full pool every second.
    for (const [capacity, slotMs, clients] of [
      [10, 10_000, 100],
      [5, 5_000, 50],
    ] as const) {
      const name = `${capacity} workers × ${slotMs} ms, ${clients} callers`;
      const { requests, time } = ratios({ clients, capacity, slotMs, seed: 1, server: { model: 'concurrency', latencyMs: 1 } });
      expect(requests, name).toBeLessThanOrEqual(1.25);
      expect(time, name).toBeLessThanOrEqual(1.1);
    }
  });
});

describe('adaptive pacing while new callers keep arriving faster than the callee serves, defaults only', () => {
  it('400 callers over 2 s (twice a 100/s limit), buckets and fixed windows, 1 ms and lognormal 20 ms: ≤ 1.1× the bound’s requests and ≤ 1.15× its time on each of 8 seeds (regression: 1.29–1.32× the requests, up to 1.94× the time)', () => {
    // Retries went out at the callee's whole rate on top of first tries arriving at twice it:
    // nearly all rejected, and each rejection cut, so the backlog left at a fraction of the
    // rate once the arrivals stopped. First tries now take the pacer's slots, and the rate the
    // callee serves them at, while it is full, lifts a level cut below it.
    for (const model of ['token-bucket', 'gcra', 'leaky-bucket', 'fixed-window'] as const) {
      for (const latency of [{ latencyMs: 1 }, { latencyMs: 20, distribution: 'lognormal' as const }]) {
        for (let seed = 1; seed <= 8; seed++) {
          const setup: HerdSetup = { ...herdOn(model, { ...latency, seed, arrivalMs: 2_000 }), clients: 400 };
          const run = runHerd(setup, ADAPTIVE_HERD_STRATEGY);
          const bound = herdSpreadLowerBound(setup, 1);
          const name = `${model} ${latency.latencyMs} ms, seed ${seed}`;
          expect(run.gaveUp, name).toBe(0);
          expect(run.totalRequests / bound.totalRequests, name).toBeLessThanOrEqual(1.1);
          expect(run.allSucceededMs / bound.allSucceededMs, name).toBeLessThanOrEqual(1.15);
        }
      }
    }
  });

  it('a reading on trial that a late answer raises stays on trial: fixed window, 400 callers over 2 s, lognormal 20 ms, seed 4, ≤ 1.08× the time (was 1.10×)', () => {
    // A span's reading, maybe low, is raised by each success sent within it that comes back
    // late; that raise cleared the trial, and the pacer then crept from the raised level by
    // CUBIC's slow climb instead of testing it at once.
    const setup: HerdSetup = {
      ...herdOn('fixed-window', { latencyMs: 20, distribution: 'lognormal', seed: 4, arrivalMs: 2_000 }),
      clients: 400,
    };
    const run = runHerd(setup, ADAPTIVE_HERD_STRATEGY);
    const bound = herdSpreadLowerBound(setup, 1);
    expect(run.gaveUp).toBe(0);
    expect(run.totalRequests / bound.totalRequests).toBeLessThanOrEqual(1.1);
    expect(run.allSucceededMs / bound.allSucceededMs).toBeLessThanOrEqual(1.08);
  });

  it('a worker pool (10 × 100 ms, queue 1), 400 callers over 2 s and 1,000 over 5 s, 1 ms and lognormal 20 ms: ≤ 1.1× the bound’s requests and ≤ 1.35× its time on each of 8 seeds (regression: up to 2.2× the requests)', () => {
    // The pool's window counted a first try's place only from its answer, and a retry rejected
    // just after first tries freed its place at once for the next retry: retries went into a
    // pool the arrivals kept full. The window now holds a place for each first try in flight.
    for (const [clients, arrivalMs] of [
      [400, 2_000],
      [1_000, 5_000],
    ] as const) {
      for (const latency of [{ latencyMs: 1 }, { latencyMs: 20, distribution: 'lognormal' as const }]) {
        for (let seed = 1; seed <= 8; seed++) {
          const setup: HerdSetup = { ...herdOn('concurrency', { ...latency, seed, arrivalMs, queue: 1 }), clients };
          const run = runHerd(setup, ADAPTIVE_HERD_STRATEGY);
          const bound = herdSpreadLowerBound(setup, 1);
          const name = `${clients} over ${arrivalMs} ms, ${latency.latencyMs} ms, seed ${seed}`;
          expect(run.gaveUp, name).toBe(0);
          expect(run.totalRequests / bound.totalRequests, name).toBeLessThanOrEqual(1.1);
          expect(run.allSucceededMs / bound.allSucceededMs, name).toBeLessThanOrEqual(1.35);
        }
      }
    }
  });

  it('the slot server, 1,000 callers over 5 s: ≤ 1.05× the bound’s requests and ≤ 1.15× its time on each of 8 seeds (regression: 1.25× the requests)', () => {
    // Taken for a worker pool for a while (it answers every request at its slot's end, served
    // or not), the pacer's window held ~360 retries back while their slots came due; when the
    // window went, they were re-spaced from past them, all due at once, and left in 60 ms.
    for (let seed = 1; seed <= 8; seed++) {
      const setup: HerdSetup = { ...herdOn('slot', { seed, arrivalMs: 5_000 }), clients: 1_000 };
      const run = runHerd(setup, ADAPTIVE_HERD_STRATEGY);
      const bound = herdSpreadLowerBound(setup, 1);
      expect(run.gaveUp, `seed ${seed}`).toBe(0);
      expect(run.totalRequests / bound.totalRequests, `seed ${seed}`).toBeLessThanOrEqual(1.05);
      expect(run.allSucceededMs / bound.allSucceededMs, `seed ${seed}`).toBeLessThanOrEqual(1.15);
    }
  });
});
