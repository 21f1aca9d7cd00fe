/**
 * Who receives kindly's internal headers (docs/http.md, "Internal headers"): a job outside any
 * request names the hosts that take part; a third-party API gets neither header.
 *
 * Run: npx tsx examples/http-propagate.ts
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

// Two stand-ins on loopback, reached under two names: "internal" (127.0.0.1) and "third party" (localhost).
const seen: string[] = [];
const server = createServer((req: IncomingMessage, res) => {
  seen.push(`${req.headers.host?.split(':')[0]}: x-retry-attempt=${req.headers['x-retry-attempt']}`);
  res.writeHead(200).end();
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as AddressInfo).port;
process.env.ORDERS_URL = `http://127.0.0.1:${port}`;
process.env.WEATHER_URL = `http://localhost:${port}`;

// #region readme
import { downstream } from 'kindly-calls';
import { createFetch } from 'kindly-calls/http';

const ORDERS = process.env.ORDERS_URL ?? 'http://orders.internal';
const WEATHER = process.env.WEATHER_URL ?? 'https://api.weather.example';

// One fetch for everything this job calls; only our own services get the headers.
const kindlyFetch = createFetch(downstream('job'), { propagateHeaders: { hosts: ['127.0.0.1', '*.internal'] } });
await kindlyFetch(`${ORDERS}/orders`, { timeoutMs: 2_000 }); // x-retry-attempt: 0, x-request-timeout-ms: ≤ 2000
await kindlyFetch(`${WEATHER}/today`, { timeoutMs: 2_000 }); // neither header
// #endregion

console.log(seen.join('\n'));
server.close();
