/**
 * What OpenTelemetry instrumentation costs per call: `npm run bench:otel`
 * (`-- --json` for `[{ "name", "nsPerCall" }]`). Its own process, in two phases, because
 * an AsyncLocalStorage in use (OpenTelemetry's context manager, which every Node SDK setup
 * registers) slows every promise of the process on Node 20 and would skew `npm run bench`.
 *
 * Phase 1, no context manager: the same downstream never instrumented, instrumented then
 * stopped (must match: without a tracer or meter nothing is on the call path), and
 * instrumented through the API with no SDK registered (no-op tracer and meter).
 * Phase 2, context manager on as in a real setup: uninstrumented again (the baseline that
 * setup pays anyway), then a real SDK tracer and meter (spans built and handed to a
 * processor that drops them, histograms recorded).
 */
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { bench, do_not_optimize, run } from 'mitata';
// The built package, as users get it (`npm run bench:otel` builds first).
import { downstream } from '../dist/index.js';
import { instrumentDownstreams } from '../dist/otel.js';

const json = process.argv.includes('--json');
const operation = async () => 42;
const options = { retry: { maxAttempts: 3 }, attemptTimeoutMs: 10_000 } as const;
const dropAll: SpanProcessor = {
  onStart: () => undefined,
  onEnd: () => undefined,
  forceFlush: async () => undefined,
  shutdown: async () => undefined,
};

async function phase(cases: Array<[string, () => Promise<number>]>) {
  for (const [name, fn] of cases) {
    if ((await fn()) !== 42) throw new Error(`bench case ${name} did not return the operation's value`);
    bench(name, async () => do_not_optimize(await fn()));
  }
  const result = await run({ format: 'quiet', throw: true });
  return result.benchmarks.map((b) => ({
    name: b.alias,
    nsPerCall: Math.round((b.runs[0]?.stats?.avg ?? Number.NaN) * 10) / 10,
  }));
}

const plain = downstream('bench-plain', options);
const stopped = downstream('bench-stopped', options);
instrumentDownstreams(stopped, { tracer: trace.getTracer('bench'), meter: metrics.getMeter('bench') })();
const noop = downstream('bench-noop', options);
instrumentDownstreams(noop, { tracer: trace.getTracer('bench'), meter: metrics.getMeter('bench') });
// A warm-up row first: the first case measured in a process runs slower whatever it is.
const first = await phase([
  ['(warm-up)', () => plain.call(operation)],
  ['uninstrumented', () => plain.call(operation)],
  ['instrumented-then-stopped', () => stopped.call(operation)],
  ['api-without-sdk', () => noop.call(operation)],
]);
first.shift();

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const sdk = downstream('bench-sdk', options);
instrumentDownstreams(sdk, {
  tracer: new BasicTracerProvider({ spanProcessors: [dropAll] }).getTracer('bench'),
  meter: new MeterProvider().getMeter('bench'),
});
const plainAls = downstream('bench-plain-als', options);
const second = await phase([
  ['(warm-up)', () => plainAls.call(operation)],
  ['uninstrumented (context manager on)', () => plainAls.call(operation)],
  ['sdk tracer+meter (context manager on)', () => sdk.call(operation)],
]);
second.shift();

if (json) process.stdout.write(`${JSON.stringify([...first, ...second])}\n`);
else {
  console.log(`node ${process.version}`);
  console.log('case                                      ns/call   vs uninstrumented');
  for (const [rows, base] of [
    [first, first[0]],
    [second, second[0]],
  ] as const) {
    for (const r of rows) {
      const ratio = base === undefined ? '' : `${(r.nsPerCall / base.nsPerCall).toFixed(2)}×`;
      console.log(`${r.name.padEnd(40)} ${r.nsPerCall.toFixed(1).padStart(9)}   ${ratio}`);
    }
  }
}
