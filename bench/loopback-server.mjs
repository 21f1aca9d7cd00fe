// The HTTP benchmarks' callee: a keep-alive node:http server on loopback port 0, in its own
// process so that its work does not share the client's event loop. Prints its port, answers
// every request `200 ok` (2 bytes) — `/busy` with `503 busy`, `/throttled` with a 429 —, and
// exits when its parent closes stdin. `x-seen-headers` lists the request's header names, so
// the bench can check that a floor sends what kindly sends.
import { createServer } from 'node:http';

const body = Buffer.from('ok');
const busy = Buffer.from('busy\n');
const throttled = Buffer.from('slow down\n');
const server = createServer((request, response) => {
  request.resume();
  const seen = Object.keys(request.headers).sort().join(',');
  // `/throttled`: a rate limiter's 429 with its wait in `Retry-After` (kindly then looks for
  // no hint in the body, which stays on the wire until read).
  if (request.url === '/throttled') {
    response.writeHead(429, {
      'content-type': 'text/plain',
      'content-length': throttled.length,
      'retry-after': '1',
      'x-seen-headers': seen,
    });
    response.end(throttled);
    return;
  }
  // `/busy`: what an overloaded callee answers (a concurrency limiter's 503, as express-queue
  // sends it: a short text body, no wait hint).
  if (request.url === '/busy') {
    response.writeHead(503, {
      'content-type': 'text/html; charset=utf-8',
      'content-length': busy.length,
      'x-seen-headers': seen,
    });
    response.end(busy);
    return;
  }
  response.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length, 'x-seen-headers': seen });
  response.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${server.address().port}\n`);
});
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
