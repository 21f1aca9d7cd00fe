// kindly-calls/lite: the root entry with a `downstream()` that leaves out adaptive pacing and the
// latency policies (adaptive concurrency limit, derived attempt timeout, hedging), so that a
// browser app's bundler can leave their code out too — about 40 % of what `downstream()` with
// retries and timeouts bundles. Everything else is the root's, the same classes and functions.
// An option that needs a policy left out is an InvalidOptionsError naming the root entry.
export * from './index.js';
export { downstream, type LiteDownstreamOptions } from './runtime/lite-downstream.js';
