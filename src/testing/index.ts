// kindly-calls/testing: run kindly deterministically in your own tests. Pass a VirtualClock
// as `clock` and a SeededRandom as `random` to `downstream()`, then move time with
// `await clock.advance(ms)` — no real waiting, no patched global timers.
export { type Random, SeededRandom, systemRandom } from '../random/random.js';
export type { Cancel, Clock } from '../time/clock.js';
export { SystemClock, systemClock } from '../time/system-clock.js';
export { VirtualClock } from '../time/virtual-clock.js';
