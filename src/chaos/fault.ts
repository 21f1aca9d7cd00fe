import { classifyStatus } from '../classify/http-status.js';
import { HttpStatusError } from '../errors/errors.js';
import { reasonPhrase } from './reason-phrase.js';

/*
 * What an injected fault looks like to the code that hands a failed call to its caller.
 *
 * Chaos takes the place of an attempt's operation, below every client library, so it cannot
 * speak their languages: it throws neutral faults, and each surface — `fetchThrough`, the axios
 * adapter, the gRPC client interceptor — turns them into what the real fault gives its own
 * callers, the way it turns its real failures. Surfaces recognise a fault by shape, never by
 * class: the axios adapter runs in browsers, where no chaos code may be bundled, and a second
 * copy of kindly (its CJS build beside the ESM one) must recognise them too. The shapes:
 *
 * - a status: an `HttpStatusError` with `chaos: true`, `status`, and `response`, a fetch
 *   `Response` with that status, its reason phrase and the fault's headers, and no body;
 * - a network failure: a `ChaosFaultError` (`name`) with `chaos: true` and a Node-style `code`.
 */

/** Thrown for an injected `error` / `reset` fault: shaped like the network error it imitates. */
export class ChaosFaultError extends Error {
  override readonly name = 'ChaosFaultError';
  /** Always true: lets a test tell an injected fault from a real one, and a surface translate it. */
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
 * The error an attempt ends with when the callee "answers" `status` with `headers`: classified
 * like a real answer (outcome by status, hints from the headers). `chaos: true` lets a surface
 * end a call that gives up on it the way it ends one that gives up on a real status.
 */
export function injectedStatusError(
  status: number,
  headers: Record<string, string>,
  attempt: number,
  downstream: string,
): HttpStatusError {
  const response = new Response(null, { status, statusText: reasonPhrase(status), headers });
  return Object.assign(
    new HttpStatusError(status, {
      outcome: classifyStatus(status)?.outcome ?? 'unknown',
      attempts: attempt,
      downstream,
      response,
    }),
    { chaos: true as const },
  );
}
