/** A function with fetch's signature. */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

interface Undici {
  Agent: new (options: { connect: { timeout: number } }) => object;
  fetch: (input: string | URL, init?: RequestInit & { dispatcher?: object }) => Promise<Response>;
}

const byTimeout = new Map<number, Promise<FetchFunction>>();

/**
 * A fetch whose TCP/TLS connect phase times out after `ms`, on
 * Node only: it is undici's `fetch` (undici 7, an optional peer dependency) with an `Agent`
 * whose `connect.timeout` is `ms`. A connect timeout rejects with `UND_ERR_CONNECT_TIMEOUT`,
 * which kindly classifies `failed` (the request never left) and retryable.
 *
 * One agent (and so one connection pool) per distinct `ms`, created on first use and kept for
 * the life of the process. undici is loaded with a dynamic import of a computed specifier so
 * that browser bundlers never try to include it; browsers have no connect timeout to set.
 */
export function connectTimeoutFetch(ms: number): Promise<FetchFunction> {
  let cached = byTimeout.get(ms);
  if (cached === undefined) {
    cached = load(ms);
    byTimeout.set(ms, cached);
    cached.catch(() => byTimeout.delete(ms));
  }
  return cached;
}

async function load(ms: number): Promise<FetchFunction> {
  const specifier = ['und', 'ici'].join('');
  let undici: Undici;
  try {
    undici = (await import(/* @vite-ignore */ specifier)) as Undici;
  } catch (error) {
    throw new Error('The `connectTimeoutMs` option needs the optional dependency undici@7 (npm i undici@7), on Node only', {
      cause: error,
    });
  }
  const dispatcher = new undici.Agent({ connect: { timeout: ms } });
  return (input, init) => {
    if (typeof input !== 'string' && !(input instanceof URL)) {
      throw new TypeError('connectTimeoutFetch expects a URL; kindly passes Request inputs as URL + init');
    }
    return undici.fetch(input, { ...init, dispatcher });
  };
}
