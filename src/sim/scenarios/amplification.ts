import type { RetryOptions } from '../../policies/retry-decision.js';
import { Dependency } from '../dependency.js';
import { Simulation } from '../engine.js';
import { LayerChain } from '../layer-chain.js';
import { number } from '../report/format.js';
import type { Table } from '../report/model.js';
import { type BuiltinScenario, num, type ScenarioContext, type ScenarioParams, type ScenarioResult } from '../scenario.js';
import { SteadyArrivals } from '../steady-arrivals.js';

export interface AmplificationVariant {
  variant: string;
  signal: boolean;
  requests: number;
  /** Calls received per hop: outermost layer first, the dependency last. */
  callsPerHop: number[];
  /** Calls the dependency received per client request. */
  innermostCallsPerRequest: number;
  failedRequests: number;
}

/** One run: `requests` client requests (10 per second) through the chain to a dead dependency. */
export function runAmplification(
  setup: { layers: number; requests: number; seed: number },
  variant: string,
  retry: RetryOptions,
  signal: boolean,
): AmplificationVariant {
  const sim = new Simulation({ seed: setup.seed });
  const dead = new Dependency({ whenDown: 'refuse', down: [{ fromMs: 0, untilMs: Number.POSITIVE_INFINITY }] });
  let failed = 0;
  const chain = new LayerChain(sim, { layers: setup.layers, retry, signal }, dead, (_request, ok) => {
    if (!ok) failed++;
  });
  // Spaced out so that requests do not overlap: the count per request is then exact.
  const arrivals = new SteadyArrivals(sim, { ratePerSecond: 0.1, durationMs: setup.requests * 10_000 }, (request, now) =>
    chain.request(request, now),
  );
  arrivals.start();
  sim.run();
  const callsPerHop = [...chain.callsAt];
  return {
    variant,
    signal,
    requests: arrivals.count,
    callsPerHop,
    innermostCallsPerRequest: callsPerHop[callsPerHop.length - 1]! / arrivals.count,
    failedRequests: failed,
  };
}

function run(params: ScenarioParams, context: ScenarioContext): ScenarioResult {
  const setup = { layers: num(params, 'layers'), requests: num(params, 'requests'), seed: num(params, 'seed') };
  const attempts = num(params, 'attempts');
  const builtIn: RetryOptions = { maxAttempts: attempts };
  const runs: [string, RetryOptions, boolean][] = [
    ['without signal', builtIn, false],
    ['with signal', builtIn, true],
  ];
  if (context.retry !== undefined) {
    runs.push(['config, without signal', context.retry, false], ['config, with signal', context.retry, true]);
  }
  const rows = runs.map(([name, retry, signal], i) => {
    const r = runAmplification(setup, name, retry, signal);
    context.onProgress?.(i + 1, runs.length);
    return r;
  });
  const [without, withSignal] = rows as [AmplificationVariant, AmplificationVariant];
  const hopNames = [...Array.from({ length: setup.layers }, (_, i) => `layer ${i + 1}`), 'dependency'];

  const json = {
    scenario: 'amplification',
    parameters: { ...setup, attempts },
    innermostCallsPerRequest: {
      withoutSignal: without.innermostCallsPerRequest,
      withSignal: withSignal.innermostCallsPerRequest,
    },
    variants: rows,
  };
  const table: Table = {
    columns: ['variant', ...hopNames.map((h) => `${h} calls/request`)],
    align: ['left', ...hopNames.map(() => 'right' as const)],
    rows: rows.map((r) => [r.variant, ...r.callsPerHop.map((c) => number(c / r.requests))]),
  };
  return {
    json,
    report: {
      title: `kindly-calls sim amplification — ${setup.layers} layers × ${attempts} attempts, dead innermost dependency`,
      parameters: [
        ['layers', String(setup.layers)],
        ['attempts per layer', String(attempts)],
        ['client requests', String(setup.requests)],
        ['seed', String(setup.seed)],
      ] as const,
      tables: [{ title: '', table }],
      charts: [
        {
          title: 'Calls per client request at each hop',
          xLabel: 'hop (1 = outermost layer; last = the dead dependency)',
          yLabel: 'calls per client request',
          series: rows.map((r) => ({ name: r.variant, points: r.callsPerHop.map((c, i) => [i + 1, c / r.requests] as const) })),
        },
      ],
      notes: [
        `Without the signal every layer retries the one below it: ${attempts}^${setup.layers} = ${number(without.innermostCallsPerRequest)} calls reach the dead dependency per client request.`,
        `With it, the layer next to the dependency retries, gives up, and answers 503 with x-retry-exhausted: 1; the layers above do not retry that answer: ${number(withSignal.innermostCallsPerRequest)} calls.`,
      ],
    },
  };
}

export const amplification: BuiltinScenario = {
  name: 'amplification',
  summary: 'retries multiplying across layers, with and without the "don\'t retry" signal',
  description: [
    'A chain client → layer 1 → … → layer --layers → dependency. The dependency is dead (refuses',
    'every connection). Each layer retries the next with kindly RetryPolicy, --attempts attempts,',
    'default backoff; a layer that gives up answers 503. With the signal that answer carries',
    'x-retry-exhausted: 1 and the layer above does not retry it. --requests client requests, spaced',
    '10 s apart so they do not overlap. Measured: calls received per hop per client request.',
  ],
  options: [
    { name: 'layers', kind: 'integer', min: 1, max: 6, default: 3, help: 'retrying layers in the chain' },
    { name: 'attempts', kind: 'integer', min: 1, max: 5, default: 3, help: 'attempts per layer, the first included' },
    { name: 'requests', kind: 'integer', min: 1, max: 1_000, default: 100, help: 'client requests' },
    { name: 'seed', kind: 'integer', min: 0, max: 2 ** 31, default: 1, help: 'seed' },
  ],
  run,
};
