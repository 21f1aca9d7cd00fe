import type { IncomingMessage, ServerResponse } from 'node:http';
import { runWithDeadline } from '../runtime/deadline-context.js';
import {
  answerHandlerError,
  beginRequest,
  type RequestContext,
  resolveServerOptions,
  type ServerContextOptions,
} from './server-context.js';

declare module 'node:http' {
  interface IncomingMessage {
    /** Set by kindly's server middleware: the request's deadline, signal and retry state. */
    kindly?: RequestContext;
  }
}

/**
 * Wraps a `node:http` request handler: the handler runs with the request's
 * deadline (from `x-request-timeout-ms` / `grpc-timeout`, clamped to `maxTimeoutMs`) and signal
 * in scope, so every kindly call it makes inherits them; `req.kindly` carries them; and a
 * failure response after an exhausted kindly call is marked `x-retry-exhausted: 1`.
 *
 * An error that escapes the handler (thrown, or the rejection of the promise it returns) is
 * answered — 503 when a kindly call inside gave up (marked as above), 500 otherwise — and
 * handed to `onError`; it never crashes the server nor resets the connection.
 *
 * ```ts
 * http.createServer(nodeHttpHandler(async (req, res) => {
 *   const upstream = await fetchThrough(payments, 'http://payments/charge'); // inherits the deadline
 *   res.writeHead(upstream.status).end();
 * }));
 * ```
 */
export function nodeHttpHandler<Req extends IncomingMessage, Res extends ServerResponse>(
  handler: (req: Req, res: Res) => unknown,
  options?: ServerContextOptions,
): (req: Req, res: Res) => unknown {
  if (typeof handler !== 'function') throw new TypeError(`nodeHttpHandler: expected a request handler, got ${typeof handler}`);
  const settings = resolveServerOptions(options, 'nodeHttpHandler');
  return (req, res) => {
    const context = beginRequest(req, res, settings);
    req.kindly = context;
    let result: unknown;
    try {
      result = runWithDeadline(context.scope, () => handler(req, res));
    } catch (error) {
      answerHandlerError(res, context, error, settings);
      return undefined;
    }
    if (result === null || typeof result !== 'object' || typeof (result as PromiseLike<unknown>).then !== 'function') {
      return result;
    }
    return Promise.resolve(result).catch((error: unknown) => answerHandlerError(res, context, error, settings));
  };
}
