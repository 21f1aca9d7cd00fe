import type { ServerInterceptingCallInterface, ServerInterceptor, ServerListener, StatusObject } from '@grpc/grpc-js';
import { Metadata, ServerInterceptingCall } from '@grpc/grpc-js';
import { DeadlineExceededError, type GiveUpReason } from '../errors/errors.js';
import { RETRY_EXHAUSTED_HEADER } from '../hints/dont-retry.js';
import { readInboundBudget } from '../http/deadline-header.js';
import { resolveServerOptions, type ServerContextOptions } from '../http/server-context.js';
import { type DeadlineScope, runWithDeadline } from '../runtime/deadline-context.js';
import { GRPC_STATUS } from './status.js';

/**
 * A `@grpc/grpc-js` server interceptor: every kindly call a handler makes runs inside the
 * inbound call's deadline scope, exactly as behind the HTTP middleware.
 *
 * - The deadline is the one the client sent (`grpc-timeout`, which grpc-js has already
 *   read, or `x-request-timeout-ms` metadata, the tighter of the two), clamped to
 *   `maxTimeoutMs`; a call without one gets `maxTimeoutMs`.
 * - The scope's signal aborts at that deadline or when the client cancels, so nested calls
 *   (and anything given `currentDeadlineScope()?.signal`) stop.
 * - With `markExhausted`, a non-OK status gets the trailer `x-retry-exhausted: 1` when a
 *   kindly call made for this request gave up for one of `exhaustedReasons`: a kindly
 *   client upstream then does not multiply the retries already made here.
 *
 * ```ts
 * const server = new Server({ interceptors: [grpcServerInterceptor()] });
 * ```
 */
export function grpcServerInterceptor(options?: ServerContextOptions): ServerInterceptor {
  const settings = resolveServerOptions(options, 'kindly gRPC server interceptor');
  const clock = settings.clock;
  return (_method, call: ServerInterceptingCallInterface) => {
    const controller = new AbortController();
    let cancelTimer: (() => void) | undefined;
    let exhausted = false;
    let scope: DeadlineScope | undefined;
    const within = (fn: () => void) => (scope === undefined ? fn() : runWithDeadline(scope, fn));
    const stop = () => {
      cancelTimer?.();
      cancelTimer = undefined;
    };
    const listener: ServerListener = {
      onReceiveMetadata: (metadata, next) => {
        // grpc-js has parsed `grpc-timeout` by now (it removes it from the metadata).
        const asked = call.getDeadline();
        const wall = asked instanceof Date ? asked.getTime() : asked;
        const fromGrpc = Number.isFinite(wall) ? Math.max(0, wall - clock.now()) : Number.POSITIVE_INFINITY;
        // A kindly HTTP client's header may come through a gateway as metadata: the tighter wins.
        const fromHeader = readInboundBudget(metadata, settings.maxTimeoutMs).requestedMs ?? Number.POSITIVE_INFINITY;
        const budget = Math.min(fromGrpc, fromHeader, settings.maxTimeoutMs);
        const expire = () => {
          cancelTimer = undefined;
          controller.abort(new DeadlineExceededError({ outcome: 'unknown' }));
        };
        if (budget <= 0) expire();
        else cancelTimer = clock.schedule(budget, expire);
        scope = {
          deadline: clock.monotonic() + budget,
          signal: controller.signal,
          onGiveUp: (reason) => {
            if (settings.exhaustedReasons.has(reason as GiveUpReason)) exhausted = true;
          },
        };
        within(() => next(metadata));
      },
      onReceiveMessage: (message, next) => within(() => next(message)),
      onReceiveHalfClose: (next) => within(() => next()),
      onCancel: () => {
        stop();
        if (!controller.signal.aborted) {
          controller.abort(new DOMException('The client cancelled the call', 'AbortError'));
        }
      },
    };
    return new ServerInterceptingCall(call, {
      start: (next) => next(listener),
      sendStatus: (status, next) => {
        stop();
        if (settings.markExhausted && exhausted && status.code !== GRPC_STATUS.OK) {
          const metadata = status.metadata ?? new Metadata();
          metadata.set(RETRY_EXHAUSTED_HEADER, '1');
          next({ ...status, metadata } as StatusObject);
          return;
        }
        next(status);
      },
    });
  };
}
