/**
 * Makes an error without capturing a stack trace, for an error kindly makes in a promise
 * continuation of its own, where V8's stack would hold only kindly's frames (an
 * `HttpStatusError` made when a response arrives: `FetchCall.failed`, then
 * `processTicksAndRejections`, never a frame of the caller's). Capturing it is most of what
 * making an error costs (~2 µs for a bare `new Error` on Node 20 on the benchmarks' VM; for a
 * rejected response, ~1–3 % of its CPU on loopback). The error's `stack` is then its first
 * line only, `name: message`. Engines without `Error.stackTraceLimit`, or with it frozen, make the error
 * as usual.
 */
export function withoutStack<T>(make: () => T): T {
  const limit = (Error as { stackTraceLimit?: unknown }).stackTraceLimit;
  if (typeof limit !== 'number') return make();
  try {
    Error.stackTraceLimit = 0;
  } catch {
    return make(); // frozen intrinsics (SES lockdown): nothing to restore
  }
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}
