import type { IncomingMessage, ServerResponse } from 'node:http';
import { runWithDeadline } from '../runtime/deadline-context.js';
import {
  beginRequest,
  handlerErrorStatus,
  type RequestContext,
  requestScope,
  resolveServerOptions,
  type ServerContextOptions,
} from './server-context.js';

// `request.kindly` is declared on Fastify's request type in the build (tsup.config.ts).
/** The slice of Fastify's request, reply and instance the plugin uses (no type dependency on fastify). */
interface FastifyRequestLike {
  raw: IncomingMessage;
  kindly: RequestContext | null;
}
interface FastifyReplyLike {
  raw: ServerResponse;
  statusCode: number;
  code(status: number): unknown;
}
type HookDone = (error?: Error) => void;
interface FastifyLike {
  decorateRequest(name: string, value: unknown): unknown;
  addHook(
    name: 'onRequest' | 'preHandler',
    hook: (request: FastifyRequestLike, reply: FastifyReplyLike, done: HookDone) => void,
  ): unknown;
  addHook(
    name: 'onError',
    hook: (request: FastifyRequestLike, reply: FastifyReplyLike, error: unknown, done: () => void) => void,
  ): unknown;
  addHook(
    name: 'onSend',
    hook: (
      request: FastifyRequestLike,
      reply: FastifyReplyLike,
      payload: unknown,
      done: (error: null, payload: unknown) => void,
    ) => void,
  ): unknown;
}

/** Requests whose handler failed after a kindly call inside gave up: answered 503, not 500. */
const gaveUpAndFailed = new WeakSet<object>();

/** Keys Fastify itself may put in a plugin's options. */
const FASTIFY_OWN_KEYS = ['prefix', 'logLevel', 'logSerializers'];

/**
 * Fastify plugin (Fastify 4 and 5): `request.kindly` carries the request's clamped deadline
 * and signal, every kindly call in the handler inherits them, and a failure reply after an
 * exhausted kindly call is marked `x-retry-exhausted: 1`. An error escaping a handler after a
 * kindly call inside gave up is answered 503 (Fastify's own error reply, with the mark)
 * instead of Fastify's default 500; other errors keep Fastify's handling.
 *
 * The scope is entered in `onRequest` and entered again in `preHandler`, because Fastify parses
 * the body from stream events that do not carry the async context along.
 * Registered application-wide (it is not encapsulated, like a `fastify-plugin` plugin).
 *
 * ```ts
 * await app.register(fastifyPlugin, { maxTimeoutMs: 10_000 });
 * ```
 */
export const fastifyPlugin = Object.assign(
  // `instance` is typed loosely so that a real FastifyInstance is accepted whatever its
  // generics; the plugin uses only the slice described by FastifyLike.
  function fastifyPlugin(instance: object, options: ServerContextOptions | undefined, done: (error?: Error) => void): void {
    const fastify = instance as FastifyLike;
    const own: Record<string, unknown> = { ...(options ?? {}) };
    for (const key of FASTIFY_OWN_KEYS) delete own[key];
    const settings = resolveServerOptions(own as ServerContextOptions, 'fastifyPlugin');
    fastify.decorateRequest('kindly', null);
    fastify.addHook('onRequest', (request, reply, next) => {
      const context = beginRequest(request.raw, reply.raw, settings);
      request.kindly = context;
      request.raw.kindly = context;
      runWithDeadline(context.scope, () => next());
    });
    fastify.addHook('preHandler', (request, _reply, next) => {
      const scope = requestScope(request.raw);
      if (scope === undefined) next();
      else runWithDeadline(scope, () => next());
    });
    fastify.addHook('onError', (request, _reply, error, next) => {
      const context = request.kindly;
      if (context !== null && handlerErrorStatus(context, error) === 503) gaveUpAndFailed.add(request.raw);
      next();
    });
    fastify.addHook('onSend', (request, reply, payload, next) => {
      // Fastify's error handler chose 500 for an error without a status of its own.
      if (reply.statusCode === 500 && gaveUpAndFailed.has(request.raw)) reply.code(503);
      next(null, payload);
    });
    done();
  },
  {
    // What fastify-plugin sets: do not encapsulate (hooks apply to every route), and a name.
    [Symbol.for('skip-override')]: true,
    [Symbol.for('fastify.display-name')]: 'kindly',
    [Symbol.for('plugin-meta')]: { name: 'kindly', fastify: '>=4' },
  },
);
