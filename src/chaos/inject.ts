import { InvalidOptionsError, show } from '../options/validate.js';
import type { CallContext, Operation } from '../runtime/attempt.js';
import type { Downstream } from '../runtime/downstream.js';
import type { CallWrapper } from '../telemetry/call-wrapper.js';
import { ChaosFaultError, injectedStatusError } from './fault.js';
import { ChaosPlan, type ChaosPlanOptions, type DrawnFault } from './plan.js';

/** The environment variable that must be `1` for chaos to start where `NODE_ENV` is `production`. */
export const CHAOS_ENV = 'KINDLY_CHAOS';

export interface ChaosOptions extends ChaosPlanOptions {
  /**
   * Must be `true`: injecting faults into real calls is never what a production service
   * wants. Where `NODE_ENV` is `production` (in any case, spaces around it ignored), the
   * environment variable `KINDLY_CHAOS=1` is needed as well, so a staging configuration
   * shipped by mistake injects nothing.
   */
  dangerouslyEnableChaos: true;
}

/**
 * Injects faults into `downstream`'s attempts, for staging and tests: watch budgets,
 * breakers and pacing react to failures you choose. Returns the function that stops it: no
 * attempt after that is injected, not even the retry of a call already in flight.
 *
 * **Where**: inside each attempt, after every admission (budget, breaker, pacing, bulkhead)
 * and under the attempt timeout, in place of (or before) the operation. So an injected fault
 * is what the callee would have done: the attempt timeout cuts injected latency, the
 * classifier reads an injected status and its hint headers, and the breaker, budget and
 * pacer count the result like any other. Each injection is a `chaos` event and counts in
 * `stats().chaosInjected`. A call that ends on an injected fault ends as it would on the real
 * one: `fetchThrough`, the axios adapter and the gRPC client interceptor hand their callers
 * what the real fault gives them (see `fault.ts`).
 *
 * Throws `InvalidOptionsError` unless `dangerouslyEnableChaos: true` — and, where `NODE_ENV`
 * is `production` (in any case, spaces around it ignored), unless `KINDLY_CHAOS=1` too.
 */
export function enableChaos(downstream: Downstream, options: ChaosOptions): () => void {
  const problems: string[] = [];
  if (options?.dangerouslyEnableChaos !== true) {
    problems.push(`Expected \`dangerouslyEnableChaos: true\` to inject faults, got ${String(options?.dangerouslyEnableChaos)}`);
  }
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  if (isProduction(env?.NODE_ENV) && env?.[CHAOS_ENV] !== '1') {
    problems.push(`NODE_ENV is ${show(env?.NODE_ENV)}: set ${CHAOS_ENV}=1 as well to inject faults there`);
  }
  if (problems.length > 0) throw new InvalidOptionsError(`chaos on '${downstream.name}'`, problems);
  const plan = new ChaosPlan(options);
  // A call keeps the wrapper it started with, so unwrapping alone would leave the retries of
  // calls already in flight injected: each attempt asks whether chaos is still on.
  let stopped = false;
  const wrapper: CallWrapper = {
    wrap: (operation, run, call) =>
      run((ctx) => {
        if (stopped) return operation(ctx);
        const fault = plan.decide(call.key);
        if (fault === undefined) return operation(ctx);
        downstream.recordChaos(describe(fault, call.key, ctx.attempt));
        return inject(fault, ctx, operation, downstream);
      }),
  };
  const unwrap = downstream.wrapCalls(wrapper);
  return () => {
    stopped = true;
    unwrap();
  };
}

/**
 * Whether `NODE_ENV` names production. Read loosely — `Production` and ` production` (a
 * hand-edited env file, a YAML value with a stray space) are production too — because this
 * is a safety catch: a misspelling must not let chaos into production unasked. Only the
 * opt-in, `KINDLY_CHAOS=1`, is read strictly.
 */
function isProduction(nodeEnv: string | undefined): boolean {
  return typeof nodeEnv === 'string' && nodeEnv.trim().toLowerCase() === 'production';
}

function describe(fault: DrawnFault, key: string, attempt: number): Parameters<Downstream['recordChaos']>[0] {
  const event: Parameters<Downstream['recordChaos']>[0] = { key, attempt, fault: fault.kind };
  if (fault.kind === 'latency') event.delayMs = fault.ms;
  if (fault.kind === 'status') event.status = fault.status;
  if (fault.kind === 'error') event.outcome = fault.outcome;
  return event;
}

/** Applies one drawn fault to one attempt. */
async function inject<T>(fault: DrawnFault, ctx: CallContext, operation: Operation<T>, downstream: Downstream): Promise<T> {
  switch (fault.kind) {
    case 'latency':
      await downstream.clock.sleep(fault.ms, ctx.signal);
      return await operation(ctx);
    case 'error':
      if (fault.outcome === 'failed')
        throw new ChaosFaultError('connect ECONNREFUSED (injected by kindly chaos)', 'ECONNREFUSED');
      try {
        // The answer is lost: a response body nobody will read is cancelled, freeing its connection.
        const lost = (await operation(ctx)) as { body?: { cancel?: () => Promise<void> } | null } | null | undefined;
        lost?.body?.cancel?.()?.catch(() => undefined);
      } catch {
        // Lost either way.
      }
      throw new ChaosFaultError('the answer was lost (injected by kindly chaos)', 'ERR_CHAOS_ANSWER_LOST');
    case 'reset':
      throw new ChaosFaultError('socket hang up: ECONNRESET (injected by kindly chaos)', 'ECONNRESET');
    case 'timeout':
      return await new Promise<T>((_resolve, reject) => {
        const signal = ctx.signal;
        if (signal.aborted) reject(signal.reason);
        else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    case 'status':
      throw injectedStatusError(fault.status, fault.headers, ctx.attempt, downstream.name);
  }
}
