import type {
  InterceptingCall,
  InterceptingListener,
  Interceptor,
  InterceptorOptions,
  NextCall,
  StatusObject,
} from '@grpc/grpc-js';
import { Metadata } from '@grpc/grpc-js';
import {
  isAttemptTimeoutError,
  isBulkheadRejectedError,
  isCircuitOpenError,
  isDeadlineExceededError,
  isGiveUpError,
} from '../errors/errors.js';
import { reportHookError } from '../errors/report-hook-error.js';
import { GRPC_PREVIOUS_ATTEMPTS_HEADER } from '../http/attempt-header.js';
import { OptionsValidator } from '../options/validate.js';
import type { CallContext } from '../runtime/attempt.js';
import type { CallOptions, Downstream } from '../runtime/downstream.js';
import type { AttemptTelemetry } from '../telemetry/call-wrapper.js';
import { injectedFaultAsGrpc, injectedStatusAsGrpc } from './injected-fault.js';
import { type ClassifyGrpcStatusOptions, classifyGrpcStatus, GRPC_STATUS } from './status.js';
import { GrpcStatusError } from './status-error.js';

/** What `nextCall` returns (grpc-js does not export the interface by name). */
type InterceptingCallInterface = ReturnType<NextCall>;
type MessageContext = Parameters<InterceptingCallInterface['sendMessageWithContext']>[0];

/**
 * Names a gRPC attempt's span as the OpenTelemetry RPC conventions do (`pkg.Service/Method`;
 * `rpc.system`, `rpc.service`, `rpc.method`) and adds its trace context to the metadata.
 */
function describeGrpcAttempt(telemetry: AttemptTelemetry, path: string, metadata: Metadata): void {
  const name = path.startsWith('/') ? path.slice(1) : path;
  const slash = name.lastIndexOf('/');
  telemetry.updateName(name);
  telemetry.setAttribute('rpc.system', 'grpc');
  if (slash > 0) {
    telemetry.setAttribute('rpc.service', name.slice(0, slash));
    telemetry.setAttribute('rpc.method', name.slice(slash + 1));
  }
  telemetry.inject((key, value) => metadata.set(key, value));
}

/** How a method path (`/pkg.Service/Method`) picks a breaker/bulkhead/pacer lane or a budget. */
export type GrpcKeyBy = 'service' | 'method' | ((path: string) => string);

export interface GrpcClientOptions extends ClassifyGrpcStatusOptions {
  /**
   * The breaker / bulkhead / pacer lane of a call: per service (`/pkg.Service`), per method
   * (`/pkg.Service/Method`) or your own function of the path.
   * @default 'service'
   */
  key?: GrpcKeyBy;
  /** The retry budget a call draws on. @default the downstream's name (one budget per channel) */
  budgetKey?: GrpcKeyBy;
  /**
   * Whether a method may be repeated after an `unknown` outcome (DEADLINE_EXCEEDED,
   * INTERNAL, …). `failed` outcomes (UNAVAILABLE, RESOURCE_EXHAUSTED) are retried whatever
   * this says.
   * @default the downstream's `idempotent`
   */
  idempotent?: boolean | ((path: string) => boolean);
}

const KEYS = ['key', 'budgetKey', 'idempotent', 'retryableCodes'] as const;

/**
 * A `@grpc/grpc-js` client interceptor that sends unary calls through `downstream`: retries
 * with backoff on the codes that mean `failed` or (for idempotent methods) `unknown`,
 * `grpc-retry-pushback-ms` honoured (negative: no retry), `x-retry-exhausted` trailers
 * obeyed, budget / breaker / bulkhead / pacing per service or method, and the deadline
 * both ways: a call made inside an inbound request (HTTP middleware or
 * {@link grpcServerInterceptor}) inherits its deadline, and every attempt carries its own
 * deadline out as `grpc-timeout`.
 *
 * Streaming methods pass through untouched: a stream cannot be replayed safely.
 *
 * A downstream `fallback` does not answer gRPC calls: its value is no gRPC response, so a
 * call that gives up ends with the last attempt's status even when one is configured.
 *
 * ```ts
 * const client = new Greeter(address, credentials, { interceptors: [grpcClientInterceptor(downstream('greeter'))] });
 * ```
 */
export function grpcClientInterceptor(downstream: Downstream, options: GrpcClientOptions = {}): Interceptor {
  const v = new OptionsValidator('kindly gRPC interceptor');
  v.knownKeys(options, KEYS);
  for (const name of ['key', 'budgetKey'] as const) {
    const value = options[name];
    v.check(
      value === undefined || value === 'service' || value === 'method' || typeof value === 'function',
      `Expected \`${name}\` to be 'service', 'method' or a function, got ${String(value)}`,
    );
  }
  v.check(
    options.idempotent === undefined || typeof options.idempotent === 'boolean' || typeof options.idempotent === 'function',
    `Expected \`idempotent\` to be a boolean or a function, got ${String(options.idempotent)}`,
  );
  v.check(
    options.retryableCodes === undefined ||
      (Array.isArray(options.retryableCodes) && options.retryableCodes.every((c) => Number.isInteger(c) && c > 0 && c <= 16)),
    `Expected \`retryableCodes\` to be gRPC status codes 1–16, got ${String(options.retryableCodes)}`,
  );
  v.done();
  return (callOptions: InterceptorOptions, nextCall: NextCall) => {
    const method = callOptions.method_definition;
    if (method.requestStream || method.responseStream) return nextCall(callOptions) as InterceptingCall;
    return new RetryingUnaryCall(downstream, options, callOptions, nextCall) as unknown as InterceptingCall;
  };
}

function keyOf(by: GrpcKeyBy, path: string): string {
  if (typeof by === 'function') return by(path);
  if (by === 'method') return path;
  const slash = path.lastIndexOf('/');
  return slash > 0 ? path.slice(0, slash) : path;
}

/**
 * A successful attempt's answer. A class, not a plain object, so that the interceptor can
 * tell it from anything else the downstream's call might resolve with.
 */
class AttemptResult {
  constructor(
    readonly headers: Metadata | undefined,
    readonly message: unknown,
    readonly status: StatusObject,
  ) {}
}

/**
 * What grpc-js talks to in place of the real call: it keeps the request (metadata and the
 * one message), and on half-close runs the attempts through the downstream, each on a
 * fresh call from `nextCall`. The caller's listener hears only the final answer.
 */
class RetryingUnaryCall implements InterceptingCallInterface {
  private listener: Partial<InterceptingListener> | undefined;
  private metadata: Metadata | undefined;
  private message: unknown;
  private messageContext: MessageContext = {};
  private readonly controller = new AbortController();
  private current: InterceptingCallInterface | undefined;
  private done = false;
  /** The last failed attempt's error, as the downstream saw it. */
  private lastAttemptError: unknown;

  constructor(
    private readonly downstream: Downstream,
    private readonly options: GrpcClientOptions,
    private readonly callOptions: InterceptorOptions,
    private readonly nextCall: NextCall,
  ) {}

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.metadata = metadata;
    this.listener = listener;
  }

  sendMessageWithContext(context: MessageContext, message: unknown): void {
    this.messageContext = context;
    this.message = message;
  }

  sendMessage(message: unknown): void {
    this.sendMessageWithContext({}, message);
  }

  startRead(): void {
    // Unary: the one response is delivered when the call is over.
  }

  halfClose(): void {
    // grpc-js neither catches what an interceptor throws nor waits for a promise it returns:
    // whatever goes wrong from here on must still end the call with a status, or the
    // caller's callback never runs.
    let answer: Promise<AttemptResult>;
    try {
      answer = this.downstream.call((context) => this.attempt(context), this.downstreamCallOptions());
    } catch (error) {
      this.fail(internalError(error));
      return;
    }
    answer
      .then(
        (result) => (result instanceof AttemptResult ? this.finish(result) : this.fellBack()),
        (error: unknown) => this.fail(error),
      )
      .catch((error: unknown) => {
        if (!this.done) {
          this.fail(internalError(error));
          return;
        }
        // The caller's own listener threw while hearing the answer. Without the interceptor
        // grpc-js would let that escape as the caller's exception; swallowing it would hide
        // their bug, and leaving it here would make it an unhandled rejection of ours.
        reportHookError(error);
      });
  }

  /** The downstream's options for this call: lanes, budget, idempotence and deadline. */
  private downstreamCallOptions(): CallOptions<AttemptResult> {
    const path = this.callOptions.method_definition.path;
    const clock = this.downstream.clock;
    const o = this.options;
    const callOptions: CallOptions<AttemptResult> = {
      signal: this.controller.signal,
      key: keyOf(o.key ?? 'service', path),
      classify: (error, nowMs) => {
        // An injected status is read as the gRPC status it stands for, as a real HTTP answer
        // would be. An injected network fault keeps the downstream's reading (by its code):
        // its outcome is the one the chaos plan asked for, `unknown` for a reset or a lost
        // answer, where UNAVAILABLE would read `failed` and retry a non-idempotent method.
        const status = error instanceof GrpcStatusError ? error : injectedStatusAsGrpc(error);
        return status === undefined ? undefined : classifyGrpcStatus(status.grpcCode, status.metadata, nowMs, o);
      },
      // Kept for the case where the downstream's fallback answers (see `halfClose`).
      onAttemptError: (error) => {
        this.lastAttemptError = error;
      },
    };
    if (o.budgetKey !== undefined) callOptions.budgetKey = keyOf(o.budgetKey, path);
    if (o.idempotent !== undefined) {
      callOptions.idempotent = typeof o.idempotent === 'function' ? o.idempotent(path) : o.idempotent;
    }
    // The caller's own gRPC deadline (wall-clock) becomes the call's monotonic deadline.
    const asked = this.callOptions.deadline;
    if (asked !== undefined) {
      const wall = asked instanceof Date ? asked.getTime() : asked;
      if (Number.isFinite(wall)) callOptions.deadline = clock.monotonic() + (wall - clock.now());
    }
    return callOptions;
  }

  cancelWithStatus(status: number, details: string): void {
    if (this.done) return;
    this.controller.abort(new GrpcStatusError(status, details, new Metadata()));
  }

  getPeer(): string {
    return this.current?.getPeer() ?? '';
  }

  getAuthContext(): ReturnType<InterceptingCallInterface['getAuthContext']> {
    return this.current?.getAuthContext() ?? null;
  }

  /** One attempt on a fresh call, bounded by the attempt's deadline (sent as `grpc-timeout`). */
  private attempt(context: CallContext): Promise<AttemptResult> {
    const clock = this.downstream.clock;
    // grpc-js sends what is left of a deadline rounded up to the next whole unit (ms): floored
    // here, the next hop's deadline is never later than this attempt's.
    const deadline =
      context.deadline === undefined ? this.callOptions.deadline : clock.now() + Math.floor(context.deadline - clock.monotonic());
    const call = this.nextCall({ ...this.callOptions, deadline });
    this.current = call;
    const metadata = (this.metadata as Metadata).clone();
    if (context.attempt > 1) metadata.set(GRPC_PREVIOUS_ATTEMPTS_HEADER, String(context.attempt - 1));
    const telemetry = context.telemetry;
    if (telemetry !== undefined) describeGrpcAttempt(telemetry, this.callOptions.method_definition.path, metadata);
    return new Promise<AttemptResult>((resolve, reject) => {
      let headers: Metadata | undefined;
      let message: unknown;
      const signal = context.signal;
      const cancel = () =>
        call.cancelWithStatus(GRPC_STATUS.CANCELLED, 'Cancelled by kindly (attempt timeout, deadline or caller)');
      call.start(metadata, {
        onReceiveMetadata: (m: Metadata) => {
          headers = m;
        },
        onReceiveMessage: (m: unknown) => {
          message = m;
        },
        onReceiveStatus: (status: StatusObject) => {
          signal.removeEventListener('abort', cancel);
          telemetry?.setAttribute('rpc.grpc.status_code', status.code);
          if (status.code === GRPC_STATUS.OK) resolve(new AttemptResult(headers, message, status));
          else reject(Object.assign(new GrpcStatusError(status.code, status.details, status.metadata), { headers }));
        },
      });
      if (signal.aborted) cancel();
      else signal.addEventListener('abort', cancel, { once: true });
      call.sendMessageWithContext(this.messageContext, this.message);
      call.halfClose();
    });
  }

  private finish({ headers, message, status }: AttemptResult): void {
    if (this.done) return;
    this.done = true;
    const listener = this.listener;
    if (headers !== undefined) listener?.onReceiveMetadata?.(headers);
    listener?.onReceiveMessage?.(message);
    listener?.onReceiveStatus?.(status);
  }

  /**
   * The call gave up and the downstream's `fallback` answered. Its value is not a gRPC
   * response — no status, no trailers, and a downstream's fallback is written for all its
   * calls, HTTP ones included — so the caller hears what it would have heard without one:
   * the last attempt's status and trailers.
   */
  private fellBack(): void {
    this.fail(
      this.lastAttemptError ??
        // Refused before any attempt (an open breaker, a full bulkhead, a spent deadline): the
        // reason went to the fallback, not to us.
        new GrpcStatusError(
          GRPC_STATUS.UNAVAILABLE,
          "kindly: the call gave up before any attempt was made (the downstream's fallback cannot answer a gRPC call)",
          new Metadata(),
        ),
    );
  }

  private fail(error: unknown): void {
    if (this.done) return;
    this.done = true;
    const status = statusOf(error);
    const attemptError = isGiveUpError(error) ? error.cause : error;
    // Only an attempt's own headers: an error from elsewhere (a fallback that threw an HTTP
    // client's error, say) may carry `headers` grpc-js cannot read.
    const headers = (attemptError as { headers?: unknown } | null)?.headers;
    if (headers instanceof Metadata) this.listener?.onReceiveMetadata?.(headers);
    this.listener?.onReceiveStatus?.(status);
  }
}

/**
 * A failure of the interceptor's own machinery or of the caller's options (a `key` function
 * that throws, say) rather than of the server: INTERNAL, as grpc-js reports its own
 * client-side failures, with details saying where it came from.
 */
function internalError(error: unknown): GrpcStatusError {
  const reason = error instanceof Error ? error.message : String(error);
  return new GrpcStatusError(GRPC_STATUS.INTERNAL, `kindly gRPC interceptor: ${reason}`, new Metadata());
}

/**
 * The status the caller sees when the call ends without success: the last attempt's status
 * and trailers when there was one (for a fault kindly-calls/chaos injected, the status the
 * real fault would have given); otherwise the status closest to kindly's reason.
 */
export function statusOf(error: unknown): StatusObject {
  const last = isGiveUpError(error) ? error.cause : error;
  const cause = last instanceof GrpcStatusError ? last : (injectedFaultAsGrpc(last) ?? last);
  if (cause instanceof GrpcStatusError) return { code: cause.grpcCode, details: cause.details, metadata: cause.metadata };
  const details = cause instanceof Error ? cause.message : String(cause);
  const metadata = new Metadata();
  let code: number = GRPC_STATUS.UNKNOWN;
  if (isCircuitOpenError(cause)) {
    code = GRPC_STATUS.UNAVAILABLE;
    if (cause.retryAfterMs !== undefined) metadata.set('grpc-retry-pushback-ms', String(Math.ceil(cause.retryAfterMs)));
  } else if (isBulkheadRejectedError(cause)) code = GRPC_STATUS.RESOURCE_EXHAUSTED;
  else if (isDeadlineExceededError(cause) || isAttemptTimeoutError(cause)) code = GRPC_STATUS.DEADLINE_EXCEEDED;
  return { code, details, metadata };
}
