import type { IncomingMessage, ServerResponse } from 'node:http';
import { runWithDeadline } from '../runtime/deadline-context.js';
import { beginRequest, resolveServerOptions, type ServerContextOptions } from './server-context.js';

/**
 * Express middleware (Express 4 and 5) doing what `nodeHttpHandler` does for `node:http`: the
 * request's clamped deadline and signal (`req.kindly`, `getRequestSignal(req)`), inherited by
 * every kindly call made while handling it, and `x-retry-exhausted: 1` on a failure response
 * after an exhausted kindly call. Register it before the routes, and before body parsers, so
 * that everything after it runs inside the request's scope.
 *
 * ```ts
 * app.use(expressMiddleware({ maxTimeoutMs: 10_000 }));
 * ```
 */
export function expressMiddleware(
  options?: ServerContextOptions,
): (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void {
  const settings = resolveServerOptions(options, 'expressMiddleware');
  return (req, res, next) => {
    const context = beginRequest(req, res, settings);
    req.kindly = context;
    runWithDeadline(context.scope, () => next());
  };
}
