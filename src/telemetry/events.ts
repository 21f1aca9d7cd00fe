import type { Classification, Outcome } from '../classify/outcome.js';
import type { GiveUpReason } from '../errors/errors.js';
import { callHook } from '../errors/report-hook-error.js';

/** Every event carries the downstream that emitted it and the virtual/real monotonic time. */
interface EventBase {
  downstream: string;
  /** `clock.monotonic()` when the event happened. */
  atMs: number;
}

export interface AttemptStartEvent extends EventBase {
  type: 'attempt-start';
  attempt: number;
}
export interface AttemptEndEvent extends EventBase {
  type: 'attempt-end';
  attempt: number;
  outcome: Outcome;
  durationMs: number;
  /** Present when the attempt failed. */
  classification?: Classification;
  error?: unknown;
}
export interface RetryScheduledEvent extends EventBase {
  type: 'retry-scheduled';
  /** The attempt that will run after the delay (1-based). */
  nextAttempt: number;
  delayMs: number;
  backoffMs: number;
  /** The wait hint that was honoured, if any. */
  hintMs?: number;
  hintSource?: string;
  /** What made the previous attempt fail, e.g. `status 503` or `ECONNRESET`. */
  cause: string;
}
export interface GiveUpEvent extends EventBase {
  type: 'give-up';
  reason: GiveUpReason | 'aborted';
  attempts: number;
  elapsedMs: number;
  outcome: 'failed' | 'unknown';
  retryAfterMs?: number;
}
export interface HintEvent extends EventBase {
  type: 'hint';
  honoured: boolean;
  hintMs: number;
  source: string;
}
export interface BudgetExhaustedEvent extends EventBase {
  type: 'budget-exhausted';
  key: string;
}
export interface BreakerStateEvent extends EventBase {
  type: 'breaker-state';
  key: string;
  from: 'closed' | 'open' | 'half-open';
  to: 'closed' | 'open' | 'half-open';
}
export interface BulkheadRejectedEvent extends EventBase {
  type: 'bulkhead-rejected';
  why: 'queue-full' | 'queue-timeout';
}
export interface PacingDelayEvent extends EventBase {
  type: 'pacing-delay';
  delayMs: number;
  /** The learned send rate, requests per second, when known. */
  rate: number | undefined;
}
/** The adaptive concurrency limit refused an attempt. */
export interface ConcurrencyLimitedEvent extends EventBase {
  type: 'concurrency-limited';
  key: string;
  /** The learned limit at that moment. */
  limit: number;
  partition: string | undefined;
}
/** A hedge was sent: an extra attempt while `attempt` is still running. */
export interface HedgeEvent extends EventBase {
  type: 'hedge';
  attempt: number;
  /** 1 for the first hedge of this attempt. */
  hedge: number;
  /** How long the call had waited, ms. */
  delayMs: number;
}
/** The fleet store (`store` option) went down or came back; while down, policies run locally. */
export interface StoreAvailabilityEvent extends EventBase {
  type: 'store-availability';
  available: boolean;
  /** Why it went down, when it did. */
  reason?: string;
}
export interface FallbackEvent extends EventBase {
  type: 'fallback';
  reason: GiveUpReason;
}

/** kindly-calls/chaos injected a fault into an attempt (staging and tests only). */
export interface ChaosEvent extends EventBase {
  type: 'chaos';
  /** The call's lane key the fault was drawn for. */
  key: string;
  attempt: number;
  fault: 'latency' | 'error' | 'status' | 'timeout' | 'reset';
  /** `latency`: the delay added. */
  delayMs?: number;
  /** `status`: the status answered. */
  status?: number;
  /** `error`: `failed` (never reached the callee) or `unknown` (ran, answer lost). */
  outcome?: 'failed' | 'unknown';
}

export type KindlyEvent =
  | AttemptStartEvent
  | AttemptEndEvent
  | RetryScheduledEvent
  | GiveUpEvent
  | HintEvent
  | BudgetExhaustedEvent
  | BreakerStateEvent
  | BulkheadRejectedEvent
  | PacingDelayEvent
  | ConcurrencyLimitedEvent
  | HedgeEvent
  | StoreAvailabilityEvent
  | FallbackEvent
  | ChaosEvent;

export type KindlyEventType = KindlyEvent['type'];
export type EventOf<T extends KindlyEventType> = Extract<KindlyEvent, { type: T }>;

/** The event names, as constants. */
export const EVENTS = {
  attemptStart: 'attempt-start',
  attemptEnd: 'attempt-end',
  retryScheduled: 'retry-scheduled',
  giveUp: 'give-up',
  hint: 'hint',
  budgetExhausted: 'budget-exhausted',
  breakerState: 'breaker-state',
  bulkheadRejected: 'bulkhead-rejected',
  pacingDelay: 'pacing-delay',
  concurrencyLimited: 'concurrency-limited',
  hedge: 'hedge',
  storeAvailability: 'store-availability',
  fallback: 'fallback',
  chaos: 'chaos',
} as const satisfies Record<string, KindlyEventType>;

type Listener = (event: KindlyEvent) => void;

/**
 * Typed event subscriptions. Emitting costs one integer check when nobody listens, so the
 * runtime builds event objects only when `active` is true.
 */
export class EventHub {
  private readonly byType = new Map<string, Listener[]>();
  private readonly all: Listener[] = [];
  private count = 0;

  /** True when at least one listener is subscribed. */
  get active(): boolean {
    return this.count > 0;
  }

  /** Subscribes to one event type; returns the unsubscribe function. */
  on<T extends KindlyEventType>(type: T, listener: (event: EventOf<T>) => void): () => void {
    let list = this.byType.get(type);
    if (list === undefined) {
      list = [];
      this.byType.set(type, list);
    }
    return this.add(list, listener as Listener);
  }

  /** Subscribes to every event; returns the unsubscribe function. */
  onAny(listener: (event: KindlyEvent) => void): () => void {
    return this.add(this.all, listener);
  }

  emit(event: KindlyEvent): void {
    const list = this.byType.get(event.type);
    if (list !== undefined) for (const l of [...list]) safeCall(l, event);
    for (const l of [...this.all]) safeCall(l, event);
  }

  private add(list: Listener[], listener: Listener): () => void {
    list.push(listener);
    this.count++;
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      const i = list.indexOf(listener);
      if (i >= 0) list.splice(i, 1);
      this.count--;
    };
  }
}

/** A throwing listener must not break the call it observes. */
function safeCall(listener: Listener, event: KindlyEvent): void {
  callHook(listener, event);
}
