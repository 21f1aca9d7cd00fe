import { OptionsValidator, show } from '../options/validate.js';
import { SeededRandom } from '../random/random.js';

/** Which calls a fault applies to: a lane key (host for `fetchThrough`), a pattern, or a test of the key. */
export type ChaosKeyMatch = string | RegExp | ((key: string) => boolean);

/** How long an injected delay lasts: fixed ms, uniform in [min, max], or exponential with a mean. */
export type ChaosLatency = number | { min: number; max: number } | { mean: number };

/** One kind of fault, injected into a share `rate` (0–1) of the attempts whose key matches. */
export type ChaosFault =
  /** Delays the attempt by `ms`, then lets it run. */
  | { kind: 'latency'; rate: number; ms: ChaosLatency; key?: ChaosKeyMatch }
  /**
   * `failed`: the attempt never reaches the callee (a refused connection, `ECONNREFUSED`).
   * `unknown`: it reaches the callee and runs, and its answer is lost on the way back.
   */
  | { kind: 'error'; rate: number; outcome: 'failed' | 'unknown'; key?: ChaosKeyMatch }
  /** The callee answers `status` with `headers` (`retry-after`, `grpc-retry-pushback-ms`, …); the attempt does not run. */
  | { kind: 'status'; rate: number; status: number; headers?: Record<string, string>; key?: ChaosKeyMatch }
  /** The attempt never answers: kindly's attempt timeout or the deadline ends it. */
  | { kind: 'timeout'; rate: number; key?: ChaosKeyMatch }
  /** The connection is reset before an answer (`ECONNRESET`, outcome `unknown`); the attempt does not run. */
  | { kind: 'reset'; rate: number; key?: ChaosKeyMatch };

export type ChaosFaultKind = ChaosFault['kind'];

/** A fault chosen for one attempt, with its parameters drawn. */
export type DrawnFault =
  | { kind: 'latency'; ms: number }
  | { kind: 'error'; outcome: 'failed' | 'unknown' }
  | { kind: 'status'; status: number; headers: Record<string, string> }
  | { kind: 'timeout' }
  | { kind: 'reset' };

export interface ChaosPlanOptions {
  /** Faults, tried in order for each attempt; the first that fires applies. */
  faults: readonly ChaosFault[];
  /**
   * Seed of the draws. Each key draws from its own stream derived from this seed, so the
   * faults a key sees do not depend on how other keys' calls interleave with its own.
   * @default 1
   */
  seed?: number;
}

const KINDS: readonly ChaosFaultKind[] = ['latency', 'error', 'status', 'timeout', 'reset'];

/**
 * Which fault (if any) each attempt gets: a pure function of the seed, the key and how many
 * attempts that key has had. Shared by the runtime (`enableChaos`) and the simulator
 * (`ChaosDependency`), so that a fault rate tried in the simulator is the rate staging sees.
 */
export class ChaosPlan {
  readonly faults: readonly ChaosFault[];
  readonly seed: number;
  private readonly streams = new Map<string, SeededRandom>();

  constructor(options: ChaosPlanOptions) {
    const v = new OptionsValidator('chaos');
    v.knownKeys(options, ['faults', 'seed', 'dangerouslyEnableChaos']);
    const faults = options?.faults;
    if (!Array.isArray(faults)) v.check(false, `Expected \`faults\` to be an array, got ${show(faults)}`);
    else {
      for (let i = 0; i < faults.length; i++) checkFault(v, faults[i] as ChaosFault, `faults[${i}]`);
    }
    if (options?.seed !== undefined) v.number('seed', options.seed, 0, 2 ** 32 - 1);
    v.done();
    this.faults = [...faults];
    this.seed = options.seed ?? 1;
  }

  /** The fault for the next attempt on `key`, or `undefined` for none. */
  decide(key: string): DrawnFault | undefined {
    let random = this.streams.get(key);
    if (random === undefined) {
      random = new SeededRandom((this.seed ^ hash(key)) >>> 0);
      this.streams.set(key, random);
    }
    for (const fault of this.faults) {
      // One draw per fault per attempt, matching or not, keeps each key's stream aligned.
      const roll = random.next();
      if (roll >= fault.rate || !matches(fault.key, key)) continue;
      return draw(fault, random);
    }
    return undefined;
  }
}

function draw(fault: ChaosFault, random: SeededRandom): DrawnFault {
  switch (fault.kind) {
    case 'latency':
      return { kind: 'latency', ms: latencyMs(fault.ms, random) };
    case 'error':
      return { kind: 'error', outcome: fault.outcome };
    case 'status':
      return { kind: 'status', status: fault.status, headers: { ...(fault.headers ?? {}) } };
    case 'timeout':
      return { kind: 'timeout' };
    case 'reset':
      return { kind: 'reset' };
  }
}

function latencyMs(spec: ChaosLatency, random: SeededRandom): number {
  if (typeof spec === 'number') return spec;
  if ('mean' in spec) return -spec.mean * Math.log(1 - random.next());
  return spec.min + (spec.max - spec.min) * random.next();
}

function matches(match: ChaosKeyMatch | undefined, key: string): boolean {
  if (match === undefined) return true;
  if (typeof match === 'string') return match === key;
  if (match instanceof RegExp) {
    match.lastIndex = 0;
    return match.test(key);
  }
  return match(key) === true;
}

/** FNV-1a: spreads keys over seeds. */
function hash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function checkFault(v: OptionsValidator, fault: ChaosFault, at: string): void {
  if (typeof fault !== 'object' || fault === null) {
    v.check(false, `Expected \`${at}\` to be a fault object, got ${show(fault)}`);
    return;
  }
  v.check(KINDS.includes(fault.kind), `Expected \`${at}.kind\` to be one of ${KINDS.join(', ')}, got ${show(fault.kind)}`);
  v.number(`${at}.rate`, fault.rate, 0, 1);
  v.check(fault.rate !== undefined, `Expected \`${at}.rate\` in [0, 1], got undefined`);
  const key = fault.key;
  v.check(
    key === undefined || typeof key === 'string' || key instanceof RegExp || typeof key === 'function',
    `Expected \`${at}.key\` to be a string, a RegExp or a function, got ${show(key)}`,
  );
  if (fault.kind === 'latency') {
    const ms = fault.ms;
    if (typeof ms === 'number') v.duration(`${at}.ms`, ms);
    else if (typeof ms === 'object' && ms !== null && 'mean' in ms) v.duration(`${at}.ms.mean`, ms.mean, { min: 0 });
    else if (typeof ms === 'object' && ms !== null && 'min' in ms) {
      v.duration(`${at}.ms.min`, ms.min).duration(`${at}.ms.max`, ms.max);
      v.check(!(ms.max < ms.min), `Expected \`${at}.ms.max\` ≥ \`min\`, got ${show(ms)}`);
    } else v.check(false, `Expected \`${at}.ms\` to be ms, { min, max } or { mean }, got ${show(ms)}`);
  }
  if (fault.kind === 'error') {
    v.check(
      fault.outcome === 'failed' || fault.outcome === 'unknown',
      `Expected \`${at}.outcome\` to be 'failed' or 'unknown', got ${show(fault.outcome)}`,
    );
  }
  if (fault.kind === 'status') {
    v.check(
      Number.isInteger(fault.status) && fault.status >= 400 && fault.status <= 599,
      `Expected \`${at}.status\` to be an HTTP error status 400–599, got ${show(fault.status)}`,
    );
    const headers = fault.headers;
    v.check(
      headers === undefined ||
        (typeof headers === 'object' && headers !== null && Object.values(headers).every((h) => typeof h === 'string')),
      `Expected \`${at}.headers\` to map names to strings, got ${show(headers)}`,
    );
  }
}
