// Every property test draws its cases from one named seed, set here for the whole run (vitest's
// `setupFiles`): CI and a rerun on a laptop try the same cases, so a failure is a finding that
// reproduces, not a draw that comes and goes between runs. fast-check names the seed and path of
// any failure it finds; a test that wants cases of its own passes its own `seed`.
import fc from 'fast-check';

export const PROPERTY_SEED = 0x6b696e64;

fc.configureGlobal({ seed: PROPERTY_SEED });
