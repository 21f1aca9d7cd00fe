import type { Operation } from '../runtime/attempt.js';

/**
 * What an instrumentation (kindly-calls/otel) learns about one attempt from the layer that
 * makes it: the HTTP layer names the request, the gRPC interceptor the method. A facade over
 * a span, so that the core never loads a tracing library.
 */
export interface AttemptTelemetry {
  /** Renames the attempt (HTTP: the method; gRPC: `pkg.Service/Method`). */
  updateName(name: string): void;
  setAttribute(key: string, value: string | number | boolean): void;
  /** Adds this attempt's trace-context headers (W3C `traceparent`, …) through `set`, when tracing propagates. */
  inject(set: (name: string, value: string) => void): void;
}

/**
 * Wraps every logical call of a downstream (see `Downstream.wrapCalls`). `run` starts the
 * call through the pipeline with the operation given to it; a wrapper may hand it a wrapped
 * operation (to run each attempt inside its own context) and must return what `run` returns.
 */
export interface CallWrapper {
  wrap<T>(operation: Operation<T>, run: (operation: Operation<T>) => Promise<T>, call: CallInfo): Promise<T>;
}

/** What a wrapper knows about the call it wraps. */
export interface CallInfo {
  /** The call's breaker / bulkhead / pacer lane (`fetchThrough`: the host). */
  key: string;
}
