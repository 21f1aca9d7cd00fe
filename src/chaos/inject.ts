import { classifyStatus } from '../classify/http-status.js';
import { HttpStatusError } from '../errors/errors.js';
import { InvalidOptionsError } from '../options/validate.js';
import type { CallContext, Operation } from '../runtime/attempt.js';
import type { Downstream } from '../runtime/downstream.js';
import type { CallWrapper } from '../telemetry/call-wrapper.js';
import { ChaosPlan, type ChaosPlanOptions, type DrawnFault } from './plan.js';

/** The environment variable that must be `1` for chaos to start where `NODE_ENV` is `production`. */
export const CHAOS_ENV = 'KINDLY_CHAOS';

export interface ChaosOptions extends ChaosPlanOptions {
  /**
   * Must be `true`: injecting faults into real calls is never what a production service
   * wants. Where `NODE_ENV=production`, the environment variable `KINDLY_CHAOS=1` is needed
   * as well, so a staging configuration shipped by mistake injects nothing.
   */
  dangerouslyEnableChaos: true;
}

/** Thrown for an injected `error` / `reset` fault: shaped like the network error it imitates. */
export class ChaosFaultError extends Error {
  override readonly name = 'ChaosFaultError';
  /** Always true: lets a test tell an injected fault from a real one. */
  readonly chaos = true;
  constructor(
    message: string,
    /** `ECONNREFUSED` (failed), `ECONNRESET` (unknown), or `ERR_CHAOS_ANSWER_LOST` (unknown). */
    readonly code: string,
  ) {
    super(message);
  }
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
 * `stats().chaosInjected`.
 *
 * Throws `InvalidOptionsError` unless `dangerouslyEnableChaos: true` — and, where
 * `NODE_ENV=production`, unless `KINDLY_CHAOS=1` too.
 */
export function enableChaos(downstream: Downstream, options: ChaosOptions): () => void {
  const problems: string[] = [];
  if (options?.dangerouslyEnableChaos !== true) {
    problems.push(`Expected \`dangerouslyEnableChaos: true\` to inject faults, got ${String(options?.dangerouslyEnableChaos)}`);
  }
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  if (env?.NODE_ENV === 'production' && env[CHAOS_ENV] !== '1') {
    problems.push(`NODE_ENV is 'production': set ${CHAOS_ENV}=1 as well to inject faults there`);
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
    case 'status': {
      const response = new Response(null, { status: fault.status, headers: fault.headers });
      // `chaos: true` lets `fetchThrough` end a call that gives up on it with this response,
      // as it does with a real one.
      throw Object.assign(
        new HttpStatusError(fault.status, {
          outcome: classifyStatus(fault.status)?.outcome ?? 'unknown',
          attempts: ctx.attempt,
          downstream: downstream.name,
          response,
        }),
        { chaos: true },
      );
    }
  }
}
