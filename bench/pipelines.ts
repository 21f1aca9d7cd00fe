/**
 * The kindly pipelines the HTTP benches measure, in one place so every bench compares the
 * same ones: retry with an attempt timeout, and the full pipeline (total timeout, budget,
 * breaker, bulkhead, pacing). bench/call-loop.mjs keeps a copy: it runs on plain Node, which
 * cannot import this file.
 */
export const PLAIN_PIPELINE = { retry: { maxAttempts: 3 }, attemptTimeoutMs: 10_000 };

export const FULL_HTTP_PIPELINE = {
  ...PLAIN_PIPELINE,
  totalTimeoutMs: 30_000,
  budget: {},
  breaker: {},
  bulkhead: { maxConcurrent: 1_000 },
  pacing: {},
};
